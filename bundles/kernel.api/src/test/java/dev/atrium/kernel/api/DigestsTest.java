package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DigestsTest {

    @Test
    void sha256MatchesTheFips180TestVector() {
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", Digests.sha256Hex("abc"));
        assertArrayEquals(Digests.sha256("abc"), Digests.sha256("abc".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void pkceS256MatchesRfc7636AppendixB() {
        assertEquals(
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                Digests.sha256Base64Url("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
    }

    @Test
    void base64UrlRoundTripsWithoutPadding() {
        byte[] bytes = {(byte) 0xfb, (byte) 0xff, 0x01};
        assertEquals("-_8B", Digests.base64Url(bytes));
        assertArrayEquals(bytes, Digests.fromBase64Url("-_8B"));
    }

    @Test
    void constantTimeEqualsIsFalseForNullOrDifferentValues() {
        assertTrue(Digests.constantTimeEquals("a", "a"));
        assertFalse(Digests.constantTimeEquals("a", "b"));
        assertFalse(Digests.constantTimeEquals((String) null, "a"));
        assertFalse(Digests.constantTimeEquals(new byte[] {1}, null));
    }
}
