package dev.atrium.apps.internal.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Whatever the input, parse answers, quickly, with problems or a manifest, and never throws. */
class ManifestFuzzTest {

    /**
     * Parses, and checks the answer is well formed: a manifest xor problems, each with a message and a path. The
     * timeout catches a blow-up (an alias bomb, a quadratic walk), not slowness of a loaded machine.
     */
    private static ManifestParser.Result answers(String yaml) {
        ManifestParser.Result r = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> ManifestParser.parse(yaml));
        assertNotNull(r);
        assertTrue(r.valid() == (r.manifest() != null), () -> r.problems().toString());
        for (ManifestProblem p : r.problems()) {
            assertNotNull(p.path());
            assertNotNull(p.message());
            assertTrue(p.line() >= 0);
            assertFalse(p.message().startsWith(ManifestParser.INTERNAL), p.toString());
        }
        return r;
    }

    private static void refused(String yaml) {
        ManifestParser.Result r = answers(yaml);
        assertFalse(r.valid());
        assertNull(r.manifest());
    }

    @Test
    void randomBytesNeverThrow() {
        Random random = new Random(37);
        String alphabet = "abc:-[]{}&*!|>'\"#%@`,?\n\t  01.~<=\\\u00e9\u0000\ud83d\ude00";
        for (int i = 0; i < 500; i++) {
            StringBuilder b = new StringBuilder();
            int n = random.nextInt(300);
            for (int j = 0; j < n; j++) {
                b.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            refused(b.toString());
        }
    }

    @Test
    void mutationsOfAValidManifestNeverThrow() {
        Random random = new Random(41);
        String full = ManifestParseTest.FULL;
        for (int i = 0; i < 400; i++) {
            StringBuilder b = new StringBuilder(full);
            for (int k = 0; k <= random.nextInt(4); k++) {
                int at = random.nextInt(b.length());
                switch (random.nextInt(4)) {
                    case 0 -> b.deleteCharAt(at);
                    case 1 -> b.insert(at, ":-[{*&!\n ".charAt(random.nextInt(9)));
                    case 2 -> b.setCharAt(at, (char) ('a' + random.nextInt(26)));
                    default -> b.insert(at, b.substring(random.nextInt(b.length() / 2), b.length() / 2));
                }
            }
            answers(b.toString());
        }
    }

    @Test
    void deepNestingIsRefused() {
        refused("a: " + "[".repeat(10_000) + "]".repeat(10_000));
        refused("a:\n" + nestedMappings(100));
        refused(ManifestParseTest.minimal("1") + "  resources:\n    r:\n      type: kv\n      config:\n"
                + nestedMappings(60).indent(8));
    }

    private static String nestedMappings(int depth) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            b.append("  ".repeat(i)).append("k").append(i).append(":\n");
        }
        return b.append("  ".repeat(depth)).append("v\n").toString();
    }

    @Test
    void aHugeInputIsRefusedBeforeParsing() {
        ManifestParser.Result r = answers("a: " + "x".repeat(ManifestParser.MAX_BYTES));
        assertEquals("the manifest is larger than 256 KiB", r.problems().get(0).message());
        // Characters that take more than one byte in UTF-8 count as bytes.
        assertFalse(
                answers("a: " + "\u00e9".repeat(ManifestParser.MAX_BYTES / 2)).valid());
        refused("- x\n".repeat(25_000)); // more values than the bound, well under the size
    }

    @Test
    void aliasExpansionIsBounded() {
        StringBuilder laughs = new StringBuilder("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 9; i++) {
            laughs.append("a").append(i).append(": &a").append(i).append(" [");
            for (int j = 0; j < 10; j++) {
                laughs.append(j == 0 ? "" : ", ").append("*a").append(i - 1);
            }
            laughs.append("]\n");
        }
        refused(laughs.toString());
        // Few aliases, each used often: within SnakeYAML's alias limit, stopped by the expansion bound.
        StringBuilder wide = new StringBuilder(ManifestParseTest.minimal("1"));
        wide.append("  resources:\n    r:\n      type: kv\n      config:\n        a: &a [")
                .append("x, ".repeat(5000))
                .append("x]\n");
        wide.append("        b: [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n");
        ManifestParser.Result r = answers(wide.toString());
        assertTrue(
                r.problems().get(0).message().contains("an alias counts each time"),
                r.problems().toString());
        refused("a: &a [*a]\n");
    }

    @Test
    void aFileOfManyProblemsGetsABoundedAnswer() {
        StringBuilder b = new StringBuilder("apiVersion: atrium.dev/v1alpha1\nkind: App\nmetadata: {name: x}\n");
        b.append("spec:\n  version: '1'\n  resources:\n");
        for (int i = 0; i < 1000; i++) {
            b.append("    r").append(i).append(": {type: nope}\n");
        }
        ManifestParser.Result r = answers(b.toString());
        assertEquals(Problems.MAX + 1, r.problems().size());
        assertEquals("and 900 more problems", r.problems().get(Problems.MAX).message());
    }
}
