package dev.atrium.repos.releases.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class SemVerTest {

    @Test
    void versionsSortByPrecedenceWithPrereleasesBelowTheirRelease() {
        List<String> ordered = List.of(
                "1.0.0-alpha",
                "1.0.0-alpha.1",
                "1.0.0-alpha.beta",
                "1.0.0-beta",
                "1.0.0-beta.2",
                "1.0.0-beta.11",
                "1.0.0-rc.1",
                "1.0.0",
                "v1.1.0-rc.1",
                "1.1.0",
                "1.10.0",
                "2.0.0");
        List<SemVer> shuffled = new ArrayList<>(
                ordered.stream().map(t -> SemVer.parse(t).orElseThrow()).toList());
        Collections.shuffle(shuffled, new java.util.Random(7));
        Collections.sort(shuffled);
        assertEquals(
                ordered.stream()
                        .map(t -> t.startsWith("v") ? t.substring(1) : t)
                        .toList(),
                shuffled.stream().map(SemVer::text).toList());
    }

    @Test
    void tagsThatAreNotVersionsAreNotParsed() {
        for (String tag : List.of("latest", "1.0", "v1", "01.0.0", "1.0.0-", "1.0.0-01", "version-1.0.0")) {
            assertTrue(SemVer.parse(tag).isEmpty(), tag);
        }
    }

    @Test
    void buildMetadataDoesNotCountInPrecedence() {
        assertEquals(
                0,
                SemVer.parse("1.0.0+build.5")
                        .orElseThrow()
                        .compareTo(SemVer.parse("1.0.0").orElseThrow()));
    }
}
