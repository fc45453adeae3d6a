package dev.atrium.repos.pulls.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PullDiffsTest {

    @Test
    void aPatchsCountsAreItsHunksPlusAndMinusLinesNotItsHeader() {
        String patch = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n"
                + "--- not a header: a removed line\n+++ an added line\n \\ No newline at end of file\n";
        assertArrayEquals(new int[] {2, 2}, PullDiffs.counts(patch.getBytes(StandardCharsets.UTF_8)));
        assertArrayEquals(
                new int[] {0, 0},
                PullDiffs.counts("diff --git a/b b/b\nBinary files differ\n".getBytes(StandardCharsets.UTF_8)));
    }
}
