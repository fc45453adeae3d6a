package dev.atrium.itests;

import static dev.atrium.itests.StorageTest.assertSpecBody;
import static dev.atrium.itests.StorageTest.base;
import static dev.atrium.itests.StorageTest.createFile;
import static dev.atrium.itests.StorageTest.raw;
import static dev.atrium.itests.StorageTest.tree;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import dev.atrium.itests.StorageTest.Raw;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A full disk is not the client's fault and not a crash: an upload that meets ENOSPC answers 507 INSUFFICIENT_STORAGE
 * with the spec's error body and leaves neither a partial blob nor a row. The server's blob directory is a real 2 MiB
 * tmpfs, mounted before the server starts (root only: CI and this machine run the suite as root).
 */
class StorageDiskFullTest {

    @Test
    void anUploadThatFillsTheDiskIs507AndNothingIsHalfStored() throws Throwable {
        Path data = Files.createTempDirectory("atrium-storage-full-");
        Path blobs = Files.createDirectories(data.resolve("blobs"));
        boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", blobs.toString()) == 0;
        Assumptions.assumeTrue(mounted, "mounting a tmpfs needs root");
        TestDatabase db = null;
        AtriumServer server = null;
        try {
            db = TestDatabase.create();
            server = AtriumServer.launch(data, db, Map.of());
            User u = server.newUser();

            // 1.4 MB fit; 0.9 MB more do not
            byte[] filler = random(1_400_000, 1);
            JsonNode kept = createFile(u, "kept.bin", "");
            String keptUrl = server.base() + base(u) + "/" + kept.path("id").asText() + "/content";
            assertEquals(
                    200,
                    raw("PUT", keptUrl, u.http().token(), filler, "Content-Type", "application/octet-stream")
                            .status());
            Set<String> before = tree(u).keySet();

            // a new file (JSON body), a new content for an existing file, and a direct upload: each 507, nothing stored
            Http.Reply created =
                    u.http().post(base(u) + "/files", Map.of("path", "new.txt", "content", "n".repeat(900_000)));
            assertDiskFull(created.status(), created.json());
            Raw replaced = raw(
                    "PUT", keptUrl, u.http().token(), random(1_500_000, 2), "Content-Type", "application/octet-stream");
            assertDiskFull(replaced.status(), replaced.json());
            JsonNode announced = u.http()
                    .post(base(u) + "/upload-url", Map.of("path", "direct.bin", "size", 1_500_000))
                    .json();
            Raw uploaded = raw(
                    "PUT",
                    announced.path("upload_url").asText(),
                    u.http().token(),
                    random(1_500_000, 3),
                    "Content-Type",
                    "application/octet-stream");
            assertDiskFull(uploaded.status(), uploaded.json());
            Http.Reply confirm = u.http()
                    .post(
                            base(u) + "/confirm-upload",
                            Map.of("file_id", announced.path("file_id").asText(), "size", 1_500_000));
            assertEquals(400, confirm.status(), "no bytes were kept for the upload: " + confirm.body());

            assertEquals(before, tree(u).keySet(), "no row for what did not fit");
            assertArrayEquals(
                    filler, raw("GET", keptUrl, u.http().token(), null).body(), "the old content is untouched");
            try (Stream<Path> temps = Files.list(blobs.resolve(".tmp"))) {
                assertEquals(List.of(), temps.toList(), "no partial temp file");
            }
            try (Stream<Path> all = Files.walk(blobs)) {
                assertEquals(1, all.filter(Files::isRegularFile).count(), "only the blob of kept.bin");
            }
            // and a write that fits goes through: the server is not left refusing. (Not the 900 KB again: kept.bin's
            // old bytes were read through memory-mapped windows, and a deleted file's pages come back only once the
            // JVM's garbage collector has released those, which no request can make happen.)
            assertEquals(
                    200,
                    raw(
                                    "PUT",
                                    keptUrl,
                                    u.http().token(),
                                    "small".getBytes(StandardCharsets.UTF_8),
                                    "Content-Type",
                                    "text/plain")
                            .status());
            assertEquals(
                    201,
                    u.http()
                            .post(base(u) + "/files", Map.of("path", "new.txt", "content", "n".repeat(200_000)))
                            .status());
        } finally {
            if (server != null) {
                server.stop();
            }
            run("umount", blobs.toString());
            if (db != null) {
                db.close();
            }
            AtriumServer.deleteTree(data.toFile());
        }
    }

    private static void assertDiskFull(int status, JsonNode body) {
        assertEquals(507, status, String.valueOf(body));
        assertSpecBody(body);
        assertEquals("INSUFFICIENT_STORAGE", body.path("error").path("code").asText());
        assertTrue(!body.path("error").path("message").asText().contains("Exception"), body.toString());
    }

    private static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static int run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().transferTo(System.out);
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
