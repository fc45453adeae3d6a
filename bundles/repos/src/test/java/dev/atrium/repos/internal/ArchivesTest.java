package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.internal.GitWrites.FileChange;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.eclipse.jgit.internal.storage.dfs.DfsRepositoryDescription;
import org.eclipse.jgit.internal.storage.dfs.InMemoryRepository;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.TreeFormatter;
import org.junit.jupiter.api.Test;

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
        List<FileChange> files =
                Archives.read(new ByteArrayInputStream(zip("p-1/a.txt", "a", "p-1/d/b.txt", "b")), "zip", 1000);
        assertEquals(
                List.of("a.txt", "d/b.txt"),
                files.stream().map(FileChange::path).toList());
    }

    @Test
    void anArchiveThatUnpacksPastTheLimitIsRefused() throws IOException {
        byte[] bomb = zip("big.txt", "x".repeat(200_000));
        ApiException e =
                assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(bomb), "zip", 100_000));
        assertEquals(400, e.status());
    }

    @Test
    void pathsThatLeaveTheTreeOrTouchGitAreRefused() throws IOException {
        for (String bad : List.of("../evil.txt", "a/../../evil.txt", ".git/config", "x/.git/hooks/post-update")) {
            byte[] archive = zip(bad, "x", "ok.txt", "y");
            assertEquals(
                    400,
                    assertThrows(
                                    ApiException.class,
                                    () -> Archives.read(new ByteArrayInputStream(archive), "zip", 1000))
                            .status(),
                    bad);
        }
    }

    @Test
    void anEmptyArchiveIsRefused() throws IOException {
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(zip()), "zip", 1000))
                        .status());
    }

    @Test
    void anUploadThatIsNotGzipOrIsTruncatedIsABadRequestNotAServerError() throws IOException {
        byte[] notGzip = "this is plain text, not gzip".getBytes();
        ApiException e = assertThrows(
                ApiException.class, () -> Archives.read(new ByteArrayInputStream(notGzip), "tar.gz", 1000));
        assertEquals(400, e.status());
        byte[] zip = zip("a.txt", "x".repeat(5000));
        byte[] truncated = java.util.Arrays.copyOf(zip, 60);
        assertEquals(
                400,
                assertThrows(
                                ApiException.class,
                                () -> Archives.read(new ByteArrayInputStream(truncated), "zip", 100_000))
                        .status());
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
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(zip), "zip", 1000))
                        .status());
    }

    @Test
    void archivePathsThatJGitWouldRefuseAreABadRequest() throws IOException {
        for (String bad : List.of("/etc/passwd", ".GIT/config", ".git./x", "GIT~1/x", "sub/.git")) {
            byte[] archive = zip(bad, "x", "ok.txt", "y");
            ApiException e = assertThrows(
                    ApiException.class, () -> Archives.read(new ByteArrayInputStream(archive), "zip", 1000), bad);
            assertEquals(400, e.status(), bad);
        }
    }

    @Test
    void aTreeWithADotDotEntryIsNeverExported() throws IOException {
        try (InMemoryRepository git = new InMemoryRepository(new DfsRepositoryDescription("t"));
                ObjectInserter ins = git.newObjectInserter()) {
            ObjectId blob = ins.insert(Constants.OBJ_BLOB, "evil".getBytes());
            TreeFormatter inner = new TreeFormatter();
            inner.append("evil.txt", FileMode.REGULAR_FILE, blob);
            ObjectId innerId = ins.insert(inner);
            TreeFormatter root = new TreeFormatter();
            root.append("..".getBytes(), FileMode.TREE, innerId);
            ObjectId rootId = ins.insert(root);
            ins.flush();
            ApiException e = assertThrows(ApiException.class, () -> Archives.checkExportable(git, rootId));
            assertEquals(409, e.status());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertThrows(IOException.class, () -> Archives.export(git, rootId, "p/", "zip", 0, out));
        }
    }

    private static byte[] tarGz(TarArchiveEntry[] entries, byte[][] bodies, int longFileMode) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GZIPOutputStream(bytes), "UTF-8")) {
            tar.setLongFileMode(longFileMode);
            for (int i = 0; i < entries.length; i++) {
                entries[i].setSize(bodies[i].length);
                tar.putArchiveEntry(entries[i]);
                tar.write(bodies[i]);
                tar.closeArchiveEntry();
            }
        }
        return bytes.toByteArray();
    }

    @Test
    void anExportedTarGzReadsBackWithLongNamesModesAndNoSymlinks() throws IOException {
        try (InMemoryRepository git = new InMemoryRepository(new DfsRepositoryDescription("t"));
                ObjectInserter ins = git.newObjectInserter()) {
            String longName = "n".repeat(140) + ".txt";
            TreeFormatter root = new TreeFormatter();
            root.append(longName, FileMode.REGULAR_FILE, ins.insert(Constants.OBJ_BLOB, "long".getBytes()));
            root.append("link", FileMode.SYMLINK, ins.insert(Constants.OBJ_BLOB, "run.sh".getBytes()));
            root.append("run.sh", FileMode.EXECUTABLE_FILE, ins.insert(Constants.OBJ_BLOB, "#!/bin/sh\n".getBytes()));
            ObjectId tree = ins.insert(root);
            ins.flush();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Archives.export(git, tree, "p-1/", "tar.gz", 1_700_000_000L, out);
            List<FileChange> files = Archives.read(new ByteArrayInputStream(out.toByteArray()), "tar.gz", 1000);
            assertEquals(
                    List.of(longName, "run.sh"),
                    files.stream().map(FileChange::path).toList());
            assertEquals(
                    List.of(false, true),
                    files.stream().map(FileChange::executable).toList());
            assertEquals("long", new String(files.get(0).content()));
        }
    }

    @Test
    void paxLongNamesAsModernTarWritesThemAreRead() throws IOException {
        String name = "d/" + "x".repeat(150) + ".txt";
        byte[] archive = tarGz(
                new TarArchiveEntry[] {new TarArchiveEntry(name)},
                new byte[][] {"pax".getBytes()},
                TarArchiveOutputStream.LONGFILE_POSIX);
        List<FileChange> files = Archives.read(new ByteArrayInputStream(archive), "tar.gz", 1000);
        assertEquals(
                List.of("x".repeat(150) + ".txt"),
                files.stream().map(FileChange::path).toList());
    }

    @Test
    void aTarEntryNameThatIsNotUtf8IsABadRequest() throws IOException {
        byte[] raw = new byte[1024];
        byte[] name = {'a', (byte) 0xC3, (byte) 0x28, '.', 't', 'x', 't'};
        System.arraycopy(name, 0, raw, 0, name.length);
        tarHeaderFields(raw, 0, 0);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(raw);
            out.write(new byte[1024]);
        }
        byte[] archive = gz.toByteArray();
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> Archives.read(new ByteArrayInputStream(archive), "tar.gz", 1000))
                        .status());
    }

    @Test
    void aHugePaxHeaderIsRefusedBeforeItIsHeldInMemory() throws IOException {
        long size = 64L << 20;
        byte[] header = new byte[512];
        System.arraycopy("PaxHeaders/a".getBytes(), 0, header, 0, 12);
        header[156] = 'x';
        tarHeaderFields(header, 0, size);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(header);
            out.write("67108864 comment=".getBytes());
            byte[] chunk = new byte[1 << 20];
            java.util.Arrays.fill(chunk, (byte) 'a');
            for (int i = 0; i < 64; i++) {
                out.write(chunk);
            }
        }
        ApiException e = assertThrows(
                ApiException.class, () -> Archives.read(new ByteArrayInputStream(gz.toByteArray()), "tar.gz", 1000));
        assertEquals(400, e.status());
    }

    /** Mode, ids, size, time, magic and checksum of a ustar header whose name (and type) are already set. */
    private static void tarHeaderFields(byte[] h, int at, long size) {
        octal(h, at + 100, 8, 0644);
        octal(h, at + 108, 8, 0);
        octal(h, at + 116, 8, 0);
        octal(h, at + 124, 12, size);
        octal(h, at + 136, 12, 0);
        if (h[at + 156] == 0) {
            h[at + 156] = '0';
        }
        System.arraycopy("ustar\0".getBytes(), 0, h, at + 257, 6);
        System.arraycopy("00".getBytes(), 0, h, at + 263, 2);
        java.util.Arrays.fill(h, at + 148, at + 156, (byte) ' ');
        long sum = 0;
        for (int i = at; i < at + 512; i++) {
            sum += h[i] & 0xff;
        }
        octal(h, at + 148, 7, sum);
    }

    private static void octal(byte[] h, int at, int len, long value) {
        String s = Long.toOctalString(value);
        byte[] digits = ("0".repeat(len - 1 - s.length()) + s).getBytes();
        System.arraycopy(digits, 0, h, at, len - 1);
    }
}
