package dev.atrium.actions.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a job's own links and archives can make the server's side of its workspace do: nothing outside it. */
class WorkspaceFilesTest {

    @TempDir
    Path tmp;

    @Test
    void noFileIsCollectedThroughALinkedDirectoryOrAsALink() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("secret.key"), "host secret");
        Path ws = Files.createDirectories(tmp.resolve("ws"));
        Files.createSymbolicLink(ws.resolve("r"), outside);
        Files.createSymbolicLink(ws.resolve("link.txt"), outside.resolve("secret.key"));
        Files.writeString(ws.resolve("mine.txt"), "mine");
        WorkspaceFiles files = new WorkspaceFiles(ws);
        assertThrows(java.io.IOException.class, () -> files.collect(List.of("r/secret.key")));
        assertTrue(files.collect(List.of("r")).isEmpty(), "a linked directory is not walked");
        assertTrue(files.collect(List.of("r/*.key")).isEmpty());
        Files.createDirectories(outside.resolve("sub"));
        Files.writeString(outside.resolve("sub/deep.key"), "host secret");
        assertThrows(java.io.IOException.class, () -> files.collect(List.of("r/sub/*.key")));
        assertThrows(java.io.IOException.class, () -> files.collect(List.of("r/sub")));
        assertEquals(
                List.of("mine.txt"),
                List.copyOf(files.collect(List.of("mine.txt", "link.txt")).keySet()));
        assertEquals(
                List.of("mine.txt"), List.copyOf(files.collect(List.of("*")).keySet()));
    }

    @Test
    void nothingIsWrittenThroughALinkNorOutsideTheDirectory() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path ws = Files.createDirectories(tmp.resolve("ws"));
        Files.createSymbolicLink(ws.resolve("got"), outside);
        WorkspaceFiles files = new WorkspaceFiles(ws);
        byte[] zip = zip("a.txt", "a");
        assertThrows(
                java.io.IOException.class, () -> files.unzip(new ByteArrayInputStream(zip), files.inside("got/x")));
        assertThrows(
                java.io.IOException.class,
                () -> files.unzip(new ByteArrayInputStream(zip("../../evil", "e")), files.inside("in")));
        assertThrows(java.io.IOException.class, () -> files.inside("../outside"));
        try (var listed = Files.list(outside)) {
            assertEquals(0, listed.count());
        }
        assertEquals(1, files.unzip(new ByteArrayInputStream(zip), files.inside("in")));
        assertEquals("a", Files.readString(ws.resolve("in/a.txt")));
        assertFalse(Files.exists(tmp.resolve("evil")));
        assertTrue(Files.isDirectory(ws.resolve("in")));
    }

    static byte[] zip(String name, String content) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZipOutputStream z = new ZipOutputStream(out)) {
            z.putNextEntry(new ZipEntry(name));
            z.write(content.getBytes(StandardCharsets.UTF_8));
            z.closeEntry();
        }
        return out.toByteArray();
    }
}
