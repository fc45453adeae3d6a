package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.kernel.api.ApiException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.TreeFormatter;
import org.junit.jupiter.api.Test;

class GitNamesTest {

    @Test
    void ordinaryRefNamesAreAccepted() {
        for (String ok : List.of(
                "refs/heads/main",
                "refs/heads/feature/x-1",
                "refs/tags/v1.0.0",
                "refs/heads/ünïcode",
                "refs/heads/a@b",
                "refs/heads/emoji-\uD83D\uDE00")) {
            assertNull(GitNames.refNameProblem(ok), ok);
        }
    }

    @Test
    void refNamesThatGitCheckRefFormatRefusesAreRefused() {
        for (String bad : List.of(
                "refs/heads/../../../repo_x.git/refs/heads/main",
                "refs/heads/..",
                "refs/heads/a/../b",
                "refs/heads/.hidden",
                "refs/heads/a/.b",
                "refs/heads/x.lock",
                "refs/heads/x.lock/y",
                "refs/heads/a//b",
                "refs/heads/end/",
                "refs/heads/end.",
                "refs/heads/a@{1}",
                "refs/heads/@",
                "refs/heads/sp ace",
                "refs/heads/a~1",
                "refs/heads/a^",
                "refs/heads/a:b",
                "refs/heads/a?",
                "refs/heads/a*",
                "refs/heads/a[b",
                "refs/heads/a\\b",
                "refs/heads/tab\t",
                "refs/heads/del\u007f",
                "refs/heads/nul\0",
                "HEAD",
                "heads/main",
                "",
                "refs/heads/" + "x".repeat(256))) {
            assertNotNull(GitNames.refNameProblem(bad), bad);
        }
    }

    @Test
    void aLoneSurrogateInANameIsRefusedRatherThanStoredAsAQuestionMark() {
        assertNotNull(GitNames.refNameProblem("refs/heads/a\uD800"));
        assertNotNull(GitNames.branchProblem("\uDC00"));
        assertNotNull(GitNames.storedPathProblem("dir/\uD800.txt"));
        ApiException e = assertThrows(ApiException.class, () -> GitNames.checkLookupPath("a\uDFFF"));
        assertEquals(400, e.status());
    }

    @Test
    void aBranchNameMustNotStartWithADashOrBeHead() {
        assertNotNull(GitNames.branchProblem("-rf"));
        assertNotNull(GitNames.branchProblem("HEAD"));
        assertNull(GitNames.branchProblem("release/2026"));
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> GitNames.checkBranch("../../../x.git/refs/heads/main"))
                        .status());
    }

    @Test
    void revisionsAreBranchesTagsRefsHeadOrCommitIdsAndNothingElse() {
        for (String ok : List.of(
                "main",
                "feature/x",
                "v1.0",
                "refs/heads/main",
                "HEAD",
                "abcd",
                "0123456789abcdef0123456789abcdef01234567")) {
            assertNull(GitNames.revisionProblem(ok), ok);
        }
        for (String bad : List.of(
                "main@{1}",
                "@{-1}",
                "main~1",
                "main^",
                "main^{tree}",
                "main:file",
                "a..b",
                "a...b",
                ":/message",
                "-p",
                "",
                "x".repeat(257))) {
            assertNotNull(GitNames.revisionProblem(bad), bad);
        }
    }

    @Test
    void storedPathsFollowObjectCheckerRulesForWindowsAndMacOs() {
        for (String ok : List.of("README.md", "src/main/App.java", "dir/.gitignore", "a b/c-d_e.txt", "ünïcode/ok")) {
            assertNull(GitNames.storedPathProblem(ok), ok);
        }
        for (String bad : List.of(
                "/etc/passwd",
                ".git/config",
                ".GIT/config",
                "sub/.git",
                ".git./x",
                ".git /x",
                "GIT~1/x",
                "git~1/x",
                "a/../b",
                "./a",
                "a//b",
                "a/",
                "",
                ".git::$INDEX_ALLOCATION/x",
                ".g\u200Cit/x",
                "aux",
                "con.txt",
                "a:b",
                "a\\b",
                "nul\0",
                "trailing.",
                "trailing ")) {
            assertNotNull(GitNames.storedPathProblem(bad), bad);
        }
    }

    @Test
    void lookupPathsDropOuterSlashesAndRefuseDotSegments() {
        assertEquals("a/b", GitNames.checkLookupPath("/a/b/"));
        assertEquals("", GitNames.checkLookupPath(null));
        assertEquals("aux.c", GitNames.checkLookupPath("aux.c"), "an existing file of any legal name can be read");
        for (String bad : List.of("a/../b", "..", "a//b", "./x")) {
            assertEquals(
                    400,
                    assertThrows(ApiException.class, () -> GitNames.checkLookupPath(bad))
                            .status(),
                    bad);
        }
    }

    @Test
    void exportRefusesEntryNamesThatWouldEscapeOrBecomeGit() {
        for (String bad : List.of("..", ".", ".git", ".GIT", "git~1", ".git.", ".git::$DATA")) {
            assertNotNull(GitNames.entryNameProblem(bad), bad);
        }
        assertNull(GitNames.entryNameProblem("aux.c"));
    }

    @Test
    void theObjectCheckerRefusesTreesWithTraversalOrDisguisedGitEntries() {
        for (String name : List.of("..", ".git", ".GIT", ".git.", "git~1", ".git::$INDEX_ALLOCATION", ".g\u200Cit")) {
            byte[] tree = tree(name);
            assertThrows(
                    CorruptObjectException.class,
                    () -> GitNames.newObjectChecker().check(Constants.OBJ_TREE, tree),
                    name);
        }
    }

    @Test
    void theObjectCheckerAcceptsOrdinaryTreesIncludingWindowsDeviceNames() throws CorruptObjectException {
        GitNames.newObjectChecker().check(Constants.OBJ_TREE, tree("aux.c"));
        GitNames.newObjectChecker().check(Constants.OBJ_TREE, tree("README.md"));
    }

    private static byte[] tree(String name) {
        // TreeFormatter writes the name as given, '..' included, as a hostile client would
        TreeFormatter f = new TreeFormatter();
        f.append(
                name.getBytes(StandardCharsets.UTF_8),
                FileMode.REGULAR_FILE,
                ObjectId.fromString("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"));
        return f.toByteArray();
    }
}
