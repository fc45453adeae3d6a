package dev.atrium.blob.fs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.blob.api.Blob;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Blobs are readable by the server's own user only: files 0600, directories 0700, whatever the umask or the root's old mode. */
class FsBlobStoreModesTest {

    @Test
    void blobsAreOwnerOnlyWithDirectOrBufferedWritesAndAnOldLooseRootIsTightened(@TempDir Path data) throws Exception {
        Path root = data.resolve("blobs");
        Files.createDirectories(
                root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
        for (boolean direct : new boolean[] {true, false}) {
            FsBlobStore store = new FsBlobStore(root, Duration.ofMinutes(5), direct);
            try {
                byte[] bytes = ("secret " + direct).repeat(1000).getBytes(StandardCharsets.UTF_8);
                Blob blob = store.put("modes", new ByteArrayInputStream(bytes), bytes.length);
                Path file = root.resolve(blob.key()
                        .replace(
                                "modes/",
                                "modes/" + blob.sha256().substring(0, 2) + "/"
                                        + blob.sha256().substring(2, 4) + "/"));
                assertEquals(
                        "rw-------",
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(file)),
                        file.toString());
                for (Path dir : new Path[] {
                    root,
                    root.resolve(FsBlobStore.TEMP),
                    root.resolve("modes"),
                    file.getParent().getParent(),
                    file.getParent()
                }) {
                    assertEquals(
                            "rwx------",
                            PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)),
                            dir.toString());
                }
            } finally {
                store.close();
            }
        }
    }
}
