package dev.atrium.storage.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import dev.atrium.kernel.api.ApiException;

class PathsTest {

    @Test
    void pathsAreNormalisedToRelativeNfcNamesJoinedBySlashes() {
        assertEquals("docs/a.txt", Paths.normalise("path", "docs//./a.txt/", false));
        assertEquals("", Paths.normalise("path", "", true));
        assertEquals("caf\u00e9", Paths.normalise("path", "cafe\u0301", false));
        assertEquals("a:b.txt", Paths.normalise("path", "a:b.txt", false));
    }

    @Test
    void traversalAbsolutePathsControlCharactersAndOversizeNamesAreRefused() {
        for (String bad : new String[] { "..", "a/../b", "/etc/passwd", "\\server\\x", "C:/x", "a\u0000b", "a\nb", "a\u007fb", "a\\b",
                "x".repeat(256), ("d/").repeat(2049) + "x", "a\ud800b" }) {
            ApiException e = assertThrows(ApiException.class, () -> Paths.normalise("path", bad, false), bad);
            assertEquals(400, e.status());
        }
        assertThrows(ApiException.class, () -> Paths.normalise("path", "", false));
        assertThrows(ApiException.class, () -> Paths.name("name", "a/b"));
        assertEquals("\u00e9".repeat(127), Paths.name("name", "\u00e9".repeat(127)));
        assertThrows(ApiException.class, () -> Paths.name("name", "\u00e9".repeat(128)));
    }

    @Test
    void aFolderContainsItsSubtreeOnly() {
        assertEquals(true, Paths.within("a/b", "a"));
        assertEquals(true, Paths.within("a", "a"));
        assertEquals(false, Paths.within("ab", "a"));
        assertEquals(true, Paths.within("x", ""));
    }
}
