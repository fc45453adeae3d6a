package dev.atrium.sessions.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.sessions.internal.WorkTree.Change;
import dev.atrium.sessions.internal.WorkTree.Entry;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import org.eclipse.jgit.dircache.DirCache;
import org.eclipse.jgit.dircache.DirCacheBuilder;
import org.eclipse.jgit.dircache.DirCacheEntry;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkTreeTest {

    @TempDir
    Path tmp;

    @Test
    void pathsOutsideTheWorkTreeOrIntoGitAreRefused() {
        for (String bad : List.of(
                "",
                "/etc/passwd",
                "a/../b",
                "./a",
                "a//b",
                "a/",
                ".git/config",
                "x/.GIT/hooks",
                "x/.git",
                "git~1/config",
                "a\\b",
                "a\u0000b",
                "a\ud800b",
                "x/" + "y".repeat(256))) {
            assertNotNull(WorkTree.pathProblem(bad), bad);
        }
        for (String good : List.of("a.txt", "docs/c.txt", "src/main/App.java", ".github/workflows/ci.yml", "é/ü.md")) {
            assertNull(WorkTree.pathProblem(good), good);
        }
    }

    @Test
    void aFileAndADirectoryOfTheSamePathClash() {
        assertEquals("a", WorkTree.clash(Set.of("a", "a-x", "a/b")));
        assertNull(WorkTree.clash(Set.of("a.txt", "a/b", "ab/c")));
    }

    @Test
    void checkoutEditAndCommitFindExactlyTheChangesAndWriteTheirTree() throws Exception {
        Repository git = FileRepositoryBuilder.create(tmp.resolve("bare.git").toFile());
        git.create(true);
        ObjectId base;
        try (ObjectInserter ins = git.newObjectInserter()) {
            DirCache index = DirCache.newInCore();
            DirCacheBuilder b = index.builder();
            add(b, ins, "a.txt", "alpha\n", FileMode.REGULAR_FILE);
            add(b, ins, "bin/run", "#!/bin/sh\n", FileMode.EXECUTABLE_FILE);
            add(b, ins, "docs/c.txt", "gamma\n", FileMode.REGULAR_FILE);
            b.finish();
            CommitBuilder cb = new CommitBuilder();
            cb.setTreeId(index.writeTree(ins));
            cb.setAuthor(new PersonIdent("t", "t@example.org"));
            cb.setCommitter(new PersonIdent("t", "t@example.org"));
            cb.setMessage("first\n");
            base = ins.insert(cb);
            ins.flush();
        }
        WorkTree tree = new WorkTree(tmp.resolve("session"));
        tree.checkout(git, base, 1 << 20);
        assertTrue(Files.isExecutable(tree.files().resolve("bin/run")));
        SortedMap<String, Entry> baseTree = WorkTree.treeOf(git, base);
        assertEquals(List.of(), WorkTree.changes(baseTree, tree.scan()), "a fresh checkout changes nothing");

        tree.write("a.txt", in("alpha two\n"), 100);
        tree.write("bin/run", in("#!/bin/sh\necho\n"), 100);
        tree.write("new/file.txt", in("new\n"), 100);
        tree.delete("docs/c.txt");
        assertTrue(Files.notExists(tree.files().resolve("docs")), "an emptied directory goes");
        assertThrows(ApiException.class, () -> tree.write("big.txt", in("x".repeat(101)), 100));
        assertTrue(Files.notExists(tree.files().resolve("big.txt")));
        assertThrows(ApiException.class, () -> tree.delete("docs/c.txt"));

        List<Change> changes = WorkTree.changes(baseTree, tree.scan());
        assertEquals(
                List.of("a.txt modified", "bin/run modified", "docs/c.txt deleted", "new/file.txt added"),
                changes.stream().map(c -> c.path() + " " + c.kind()).toList());
        assertEquals(FileMode.EXECUTABLE_FILE, changes.get(1).entry().mode(), "an edit keeps the executable bit");

        ObjectId written;
        try (ObjectInserter ins = git.newObjectInserter()) {
            written = tree.writeTree(git, ins, baseTree, changes);
            ins.flush();
        }
        CommitBuilder cb = new CommitBuilder();
        cb.setTreeId(written);
        cb.setParentId(base);
        cb.setAuthor(new PersonIdent("t", "t@example.org"));
        cb.setCommitter(new PersonIdent("t", "t@example.org"));
        cb.setMessage("second\n");
        ObjectId second;
        try (ObjectInserter ins = git.newObjectInserter()) {
            second = ins.insert(cb);
            ins.flush();
        }
        assertEquals(
                List.of(), WorkTree.changes(WorkTree.treeOf(git, second), tree.scan()), "the commit holds the tree");
        assertEquals(
                Set.of("a.txt", "bin/run", "docs/c.txt", "new/file.txt"),
                WorkTree.changedPaths(baseTree, WorkTree.treeOf(git, second)));
        git.close();
    }

    @Test
    void aSymbolicLinkIsNeverFollowedOutOfTheWorkTree() throws Exception {
        WorkTree tree = new WorkTree(tmp.resolve("session"));
        Files.createDirectories(tree.files());
        Files.createDirectories(tmp.resolve("outside"));
        Files.createSymbolicLink(tree.files().resolve("out"), tmp.resolve("outside"));
        ApiException e = assertThrows(ApiException.class, () -> tree.write("out/x.txt", in("x"), 10));
        assertEquals(400, e.status());
        assertTrue(Files.notExists(tmp.resolve("outside/x.txt")));
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> tree.readable("out")).status());
    }

    private static ByteArrayInputStream in(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    private static void add(DirCacheBuilder b, ObjectInserter ins, String path, String content, FileMode mode)
            throws Exception {
        DirCacheEntry e = new DirCacheEntry(path);
        e.setFileMode(mode);
        e.setObjectId(ins.insert(Constants.OBJ_BLOB, content.getBytes(StandardCharsets.UTF_8)));
        b.add(e);
    }
}
