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
}
