package dev.atrium.blob.fs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStoreContract;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A put killed with SIGKILL midway leaves nothing visible, its temp file is swept, and the same put works after. */
class FsBlobStoreCrashTest {

    private static final long SIZE = 32L * 1024 * 1024;

    @TempDir
    Path data;

    @Test
    void aPutKilledMidwayLeavesNothingListedAndItsTempFileIsSweptAway() throws Exception {
        Path blobs = data.resolve("blobs");
        Process writer = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx32m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        CrashingPut.class.getName(),
                        blobs.toString(),
                        Long.toString(SIZE),
                        "7")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("WRITING", out.readLine(), "the writer reached the middle of its put");
            assertEquals(1, temps(blobs).size(), "the half-written blob is a temp file");
            // the store writes 1 MiB buffers (O_DIRECT) on a thread of its own: all but the one being filled reach the
            // file soon after they are read
            Path part = temps(blobs).get(0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Files.size(part) < SIZE / 2 - 1024 * 1024 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(Files.size(part) >= SIZE / 2 - 1024 * 1024, "half of it is written");

            FsBlobStore sweeping = new FsBlobStore(blobs, Duration.ZERO);
            try {
                assertEquals(
                        0, sweeping.removeAbandonedTemps(), "a live writer in another process keeps its temp file");
                assertEquals(1, temps(blobs).size());
            } finally {
                sweeping.close();
            }
        } finally {
            writer.destroyForcibly();
            assertTrue(writer.waitFor(30, TimeUnit.SECONDS));
        }
        assertEquals(137, writer.exitValue(), "killed by SIGKILL");

        FsBlobStore restarted = new FsBlobStore(blobs, Duration.ofMinutes(5));
        try {
            try (Stream<Blob> listed = restarted.list("")) {
                assertEquals(List.of(), listed.toList(), "no half blob is visible");
            }
            assertEquals(1, temps(blobs).size(), "a young temp file waits for its age");
        } finally {
            restarted.close();
        }

        FsBlobStore store = new FsBlobStore(blobs, Duration.ZERO);
        try {
            assertEquals(List.of(), temps(blobs), "activation swept the abandoned temp file");
            Blob blob = store.put("crash", new BlobStoreContract.Generated(SIZE, 7), SIZE);
            assertEquals(HexFormat.of().formatHex(sha256(new BlobStoreContract.Generated(SIZE, 7))), blob.sha256());
            try (Stream<Blob> listed = store.list("")) {
                assertEquals(List.of(blob), listed.toList());
            }
            assertEquals(List.of(), temps(blobs));
        } finally {
            store.close();
        }
    }

    @Test
    void theSweepSparesAPutInProgressInThisProcess() throws Exception {
        Path blobs = data.resolve("blobs");
        FsBlobStore store = new FsBlobStore(blobs, Duration.ZERO);
        CountDownLatch midway = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        Thread put = new Thread(() -> {
            try {
                store.put(
                        "live",
                        new java.io.SequenceInputStream(
                                new java.io.ByteArrayInputStream(new byte[100_000]), new java.io.InputStream() {
                                    @Override
                                    public int read() throws java.io.IOException {
                                        midway.countDown();
                                        try {
                                            go.await();
                                        } catch (InterruptedException e) {
                                            throw new java.io.InterruptedIOException();
                                        }
                                        return -1;
                                    }
                                }),
                        1_000_000);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        put.start();
        try {
            assertTrue(midway.await(10, TimeUnit.SECONDS));
            assertEquals(1, temps(blobs).size());
            assertEquals(0, store.removeAbandonedTemps());
            assertEquals(1, temps(blobs).size());
        } finally {
            go.countDown();
            put.join(10_000);
            store.close();
        }
        assertEquals(List.of(), temps(blobs));
        FsBlobStore reopened = new FsBlobStore(blobs, Duration.ZERO);
        try (Stream<Blob> listed = reopened.list("live/")) {
            assertEquals(1, listed.count(), "the put completed after the sweep");
        } finally {
            reopened.close();
        }
    }

    private static List<Path> temps(Path blobs) throws Exception {
        try (Stream<Path> files = Files.list(blobs.resolve(FsBlobStore.TEMP))) {
            return files.toList();
        }
    }

    private static byte[] sha256(java.io.InputStream in) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] buffer = new byte[65536];
        for (int n; (n = in.read(buffer)) != -1; ) {
            sha.update(buffer, 0, n);
        }
        return sha.digest();
    }
}
