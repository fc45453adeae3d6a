package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.junit.jupiter.api.Test;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.internal.GitWrites.FileChange;

class ArchivesTest {

    private static byte[] zip(String... nameAndContent) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (int i = 0; i < nameAndContent.length; i += 2) {
                zip.putNextEntry(new ZipEntry(nameAndContent[i]));
                zip.write(nameAndContent[i + 1].getBytes());
                zip.closeEntry();
            }
        }
        return bytes.toByteArray();
    }

    @Test
    void aSingleTopDirectoryIsStripped() throws IOException {
        List<FileChange> files = Archives.read(new ByteArrayInputStream(zip("p-1/a.txt", "a", "p-1/d/b.txt", "b")), "zip", 1000);
        assertEquals(List.of("a.txt", "d/b.txt"), files.stream().map(FileChange::path).toList());
    }

    @Test
    void anArchiveThatUnpacksPastTheLimitIsRefused() throws IOException {
        byte[] bomb = zip("big.txt", "x".repeat(200_000));
        ApiException e = assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(bomb), "zip", 100_000));
        assertEquals(400, e.status());
    }

    @Test
    void pathsThatLeaveTheTreeOrTouchGitAreRefused() throws IOException {
        for (String bad : List.of("../evil.txt", "a/../../evil.txt", ".git/config", "x/.git/hooks/post-update")) {
            byte[] archive = zip(bad, "x", "ok.txt", "y");
            assertEquals(400, assertThrows(ApiException.class,
                    () -> Archives.read(new ByteArrayInputStream(archive), "zip", 1000)).status(), bad);
        }
    }

    @Test
    void anEmptyArchiveIsRefused() throws IOException {
        assertEquals(400, assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(zip()), "zip", 1000)).status());
    }

    @Test
    void anUploadThatIsNotGzipOrIsTruncatedIsABadRequestNotAServerError() throws IOException {
        byte[] notGzip = "this is plain text, not gzip".getBytes();
        ApiException e = assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(notGzip), "tar.gz", 1000));
        assertEquals(400, e.status());
        byte[] zip = zip("a.txt", "x".repeat(5000));
        byte[] truncated = java.util.Arrays.copyOf(zip, 60);
        assertEquals(400, assertThrows(ApiException.class,
                () -> Archives.read(new ByteArrayInputStream(truncated), "zip", 100_000)).status());
    }

    @Test
    void aZipEntryNameThatIsNotUtf8IsABadRequest() throws IOException {
        byte[] zip = zip("ab.txt", "x");
        // the name appears in the local header and the central directory; make it invalid UTF-8 in both
        for (int i = 0; i + 1 < zip.length; i++) {
            if (zip[i] == 'a' && zip[i + 1] == 'b') {
                zip[i] = (byte) 0xC3;
                zip[i + 1] = (byte) 0x28;
            }
        }
        assertEquals(400, assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(zip), "zip", 1000)).status());
    }

    @Test
    void archivePathsThatJGitWouldRefuseAreABadRequest() throws IOException {
        for (String bad : List.of("/etc/passwd", ".GIT/config", ".git./x", "GIT~1/x", "sub/.git")) {
            byte[] archive = zip(bad, "x", "ok.txt", "y");
            ApiException e = assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(archive), "zip", 1000), bad);
            assertEquals(400, e.status(), bad);
        }
    }

    @Test
    void aTreeWithADotDotEntryIsNeverExported() throws IOException {
        try (org.eclipse.jgit.internal.storage.dfs.InMemoryRepository git = new org.eclipse.jgit.internal.storage.dfs.InMemoryRepository(
                new org.eclipse.jgit.internal.storage.dfs.DfsRepositoryDescription("t"));
                org.eclipse.jgit.lib.ObjectInserter ins = git.newObjectInserter()) {
            org.eclipse.jgit.lib.ObjectId blob = ins.insert(org.eclipse.jgit.lib.Constants.OBJ_BLOB, "evil".getBytes());
            org.eclipse.jgit.lib.TreeFormatter inner = new org.eclipse.jgit.lib.TreeFormatter();
            inner.append("evil.txt", org.eclipse.jgit.lib.FileMode.REGULAR_FILE, blob);
            org.eclipse.jgit.lib.ObjectId innerId = ins.insert(inner);
            org.eclipse.jgit.lib.TreeFormatter root = new org.eclipse.jgit.lib.TreeFormatter();
            root.append("..".getBytes(), org.eclipse.jgit.lib.FileMode.TREE, innerId);
            org.eclipse.jgit.lib.ObjectId rootId = ins.insert(root);
            ins.flush();
            ApiException e = assertThrows(ApiException.class, () -> Archives.checkExportable(git, rootId));
            assertEquals(409, e.status());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertThrows(IOException.class, () -> Archives.export(git, rootId, "p/", "zip", 0, out));
        }
    }
}
