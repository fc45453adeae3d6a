package dev.atrium.storage.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import org.junit.jupiter.api.Test;

class PathsTest {

    @Test
    void pathsAreNormalisedToRelativeNfcNamesJoinedBySlashes() {
        assertEquals("docs/a.txt", Paths.normalise("path", "docs//./a.txt/", false));
        assertEquals("", Paths.normalise("path", "", true));
        assertEquals("caf\u00e9", Paths.normalise("path", "cafe\u0301", false));
        assertEquals(".hidden/a b.txt", Paths.normalise("path", ".hidden/a b.txt", false));
        assertEquals("console.txt/com10/lpt/x.con", Paths.normalise("path", "console.txt/com10/lpt/x.con", false));
        assertEquals("what?/a*b/<x>|\"y\"", Paths.normalise("path", "what?/a*b/<x>|\"y\"", false));
    }

    @Test
    void traversalAbsolutePathsControlCharactersAndOversizeNamesAreRefused() {
        for (String bad : new String[] {
            "..",
            "a/../b",
            "/etc/passwd",
            "\\server\\x",
            "C:/x",
            "a\u0000b",
            "a\nb",
            "a\u007fb",
            "a\\b",
            "x".repeat(256),
            ("d/").repeat(2049) + "x",
            "a\ud800b"
        }) {
            ApiException e = assertThrows(ApiException.class, () -> Paths.normalise("path", bad, false), bad);
            assertEquals(400, e.status());
        }
        assertThrows(ApiException.class, () -> Paths.normalise("path", "", false));
        assertThrows(ApiException.class, () -> Paths.name("name", "a/b"));
        assertEquals("\u00e9".repeat(127), Paths.name("name", "\u00e9".repeat(127)));
        assertThrows(ApiException.class, () -> Paths.name("name", "\u00e9".repeat(128)));
    }

    @Test
    void namesWindowsReadsAsAnotherNameOrADeviceAreRefusedNamingTheSegment() {
        for (String bad : new String[] {
            "docs/.. /x",
            "...",
            "... ",
            ".. .",
            " ",
            "a.",
            "a ",
            "CON",
            "con.txt",
            "Con .txt",
            "nul",
            "COM1",
            "lpt9.log",
            "com\u00b9",
            "AUX.tar.gz",
            "CONIN$",
            "a::$DATA",
            "a:b.txt",
            "a\\b",
            "a\u0085b",
            "a\tb"
        }) {
            ApiException e = assertThrows(ApiException.class, () -> Paths.normalise("path", bad, false), bad);
            assertEquals(400, e.status());
            String segment = bad.startsWith("docs/") ? ".. " : bad;
            if (segment.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
                assertTrue(e.getMessage().contains("'" + segment + "'"), e.getMessage());
            }
            assertThrows(ApiException.class, () -> Paths.name("name", segment), bad);
        }
        assertTrue(Paths.portable("docs/a.txt"));
        assertFalse(Paths.portable("docs/.. /evil.txt"));
    }

    @Test
    void aFolderContainsItsSubtreeOnly() {
        assertEquals(true, Paths.within("a/b", "a"));
        assertEquals(true, Paths.within("a", "a"));
        assertEquals(false, Paths.within("ab", "a"));
        assertEquals(true, Paths.within("x", ""));
    }
}
