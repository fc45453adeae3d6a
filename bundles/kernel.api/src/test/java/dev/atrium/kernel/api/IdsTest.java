package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class IdsTest {

    @Test
    void anIdIsItsKindAnUnderscoreAndTwentyBase62Characters() {
        String id = Ids.id("th");
        assertTrue(id.matches("th_[0-9A-Za-z]{20}"), id);
        assertNotEquals(id, Ids.id("th"));
    }

    @Test
    void aRandomSecretKeepsItsPrefixVerbatim() {
        assertTrue(Ids.random("atc_", 24).matches("atc_[0-9A-Za-z]{24}"));
        assertTrue(Ids.random("", 32).matches("[0-9A-Za-z]{32}"));
    }

    @Test
    void everyBase62CharacterTurnsUp() {
        String many = Ids.random("", 20_000);
        assertEquals(62, many.chars().distinct().count());
    }

    @Test
    void randomCharsComeOnlyFromTheGivenAlphabet() {
        assertTrue(Ids.randomChars("BCDF", 200).matches("[BCDF]{200}"));
    }

    @Test
    void randomBytesHaveTheAskedLength() {
        assertEquals(16, Ids.randomBytes(16).length);
    }
}
