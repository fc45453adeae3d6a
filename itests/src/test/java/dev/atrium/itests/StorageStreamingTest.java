package dev.atrium.itests;

import static dev.atrium.itests.StorageTest.base;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Large transfers stream: a 2 GiB upload and download through the API leave the server's heap (measured over JMX
 * after full collections while the bytes flow) under 64 MiB above where it started, and the bytes come back with the
 * same SHA-256. A server killed with SIGKILL in the middle of a 500 MiB upload lists no partial file after its
 * restart, keeps no blob that no file refers to, and takes the same upload again.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StorageStreamingTest {

    static final long GIB = 1L << 30;
    static final long MIB = 1L << 20;
    static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One server for both tests (a launch costs seconds): a JMX agent for the heap, a quick sweep for the crash. */
    static TestDatabase db;

    static Path data;
    static int jmx;
    static Map<String, String> env;
    static AtriumServer server;

    @BeforeAll
    static void start() throws Exception {
        db = TestDatabase.create();
        data = Files.createTempDirectory("atrium-storage-streaming-");
        jmx = AtriumServer.freePort();
        env = Map.of(
                "ATRIUM_JAVA_OPTS",
                jmxOptions(jmx),
                "ATRIUM_STORAGE_SWEEP_S",
                "1",
                "ATRIUM_STORAGE_ORPHAN_GRACE_S",
                "2",
                "ATRIUM_BLOB_FS_STALE_TEMP_S",
                "1");
        server = AtriumServer.launch(data, db, env);
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server.process.isAlive() || server.process.toHandle().descendants().anyMatch(ProcessHandle::isAlive)) {
            server.close();
        } else {
            db.close();
            AtriumServer.deleteTree(data.toFile());
        }
    }

    /** {@code length} bytes made on the fly from a seeded 1 MiB block, hashed as they are read. */
    static final class Generated extends InputStream {
        private final byte[] block = new byte[(int) MIB];
        private final long length;
        private final MessageDigest sha;
        private final AtomicLong sent;
        private long position;

        Generated(long length, long seed, AtomicLong sent) throws Exception {
            new Random(seed).nextBytes(block);
            this.length = length;
            this.sha = MessageDigest.getInstance("SHA-256");
            this.sent = sent;
        }

        @Override
        public int read() {
            throw new UnsupportedOperationException();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (position >= length) {
                return -1;
            }
            int at = (int) (position % block.length);
            int n = (int) Math.min(Math.min(len, block.length - at), length - position);
            System.arraycopy(block, at, b, off, n);
            if (at == 0) {
                b[off] ^= (byte) (position / block.length); // each MiB differs from the others
            }
            sha.update(b, off, n);
            position += n;
            sent.addAndGet(n);
            return n;
        }

        String sha256() {
            return HexFormat.of().formatHex(sha.digest());
        }
    }

    static HttpResponse<String> put(String url, String token, InputStream body, long length) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/octet-stream")
                .timeout(Duration.ofMinutes(5))
                .PUT(HttpRequest.BodyPublishers.fromPublisher(
                        HttpRequest.BodyPublishers.ofInputStream(() -> body), length))
                .build();
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** The server JVM's heap, through the JMX agent it was started with on a loopback port ({@link #jmxOptions}). */
    static final class Heap implements AutoCloseable {
        private final JMXConnector connector;
        private final MemoryMXBean memory;

        Heap(int port) throws Exception {
            connector = JMXConnectorFactory.connect(
                    new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi"));
            MBeanServerConnection mbeans = connector.getMBeanServerConnection();
            memory = ManagementFactory.newPlatformMXBeanProxy(
                    mbeans, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
        }

        /** Heap in use after a full collection: what the server really holds. */
        long retained() {
            memory.gc();
            return memory.getHeapMemoryUsage().getUsed();
        }

        @Override
        public void close() throws IOException {
            connector.close();
        }
    }

    /** The server's default JVM options (the atrium script's) and a JMX agent on {@code port}, loopback only, for the test. */
    static String jmxOptions(int port) {
        return "-XX:+UseSerialGC -Xms64m -Xmx768m -XX:MaxMetaspaceSize=192m -XX:ReservedCodeCacheSize=96m"
                + " -Dcom.sun.management.jmxremote.port=" + port + " -Dcom.sun.management.jmxremote.rmi.port=" + port
                + " -Dcom.sun.management.jmxremote.host=127.0.0.1 -Djava.rmi.server.hostname=127.0.0.1"
                + " -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false";
    }

    /** Samples the retained heap every half second while {@code transfer} runs; returns the highest sample. */
    static long peakWhile(Heap heap, CompletableFuture<?> transfer) throws Exception {
        long peak = 0;
        while (!transfer.isDone()) {
            peak = Math.max(peak, heap.retained());
            Thread.sleep(500);
        }
        transfer.get();
        return peak;
    }

    @Test
    @Order(1)
    void twoGibibytesStreamUpAndDownWithTheHeapGrowingLessThan64MiBAndTheSameSha256() throws Throwable {
        try (Heap heap = new Heap(jmx)) {
            User u = server.newUser();
            String id = StorageTest.createFile(u, "big/two.bin", "").path("id").asText();
            long baseline = heap.retained();

            long size = 2 * GIB;
            Generated body = new Generated(size, 42, new AtomicLong());
            String url = server.base() + base(u) + "/" + id + "/content";
            CompletableFuture<HttpResponse<String>> upload = CompletableFuture.supplyAsync(() -> {
                try {
                    return put(url, u.http().token(), body, size);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long uploadPeak = peakWhile(heap, upload);
            assertEquals(200, upload.get().statusCode(), upload.get().body());
            String sent = body.sha256();
            JsonNode file = Http.JSON.readTree(upload.get().body()).path("file");
            assertEquals(sent, file.path("sha256").asText());
            assertEquals(size, file.path("size").asLong());

            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            AtomicLong received = new AtomicLong();
            CompletableFuture<Void> download = CompletableFuture.runAsync(() -> {
                try {
                    HttpResponse<InputStream> r = CLIENT.send(
                            HttpRequest.newBuilder(URI.create(server.base() + base(u) + "/download/" + id))
                                    .header(
                                            "Authorization",
                                            "Bearer " + u.http().token())
                                    .build(),
                            HttpResponse.BodyHandlers.ofInputStream());
                    assertEquals(200, r.statusCode());
                    byte[] buffer = new byte[1 << 16];
                    try (InputStream in = r.body()) {
                        for (int n; (n = in.read(buffer)) != -1; ) {
                            sha.update(buffer, 0, n);
                            received.addAndGet(n);
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long downloadPeak = peakWhile(heap, download);
            assertEquals(size, received.get());
            assertEquals(sent, HexFormat.of().formatHex(sha.digest()));
            assertTrue(
                    uploadPeak - baseline < 64 * MIB, "upload: heap grew by " + (uploadPeak - baseline) / MIB + " MiB");
            assertTrue(
                    downloadPeak - baseline < 64 * MIB,
                    "download: heap grew by " + (downloadPeak - baseline) / MIB + " MiB");
            System.out.printf(
                    "heap: baseline %d MiB, upload peak +%d MiB, download peak +%d MiB%n",
                    baseline / MIB, (uploadPeak - baseline) / MIB, (downloadPeak - baseline) / MIB);
        }
    }

    @Test
    @Order(2)
    void aServerKilledMidUploadListsNoPartialFileKeepsNoOrphanBlobAndTakesTheUploadAgain() throws Throwable {
        User u = server.newUser();
        long size = 500 * MIB;
        String id = StorageTest.createFile(u, "crash/big.bin", "").path("id").asText();
        String announced = u.http()
                .post(base(u) + "/upload-url", Map.of("path", "crash/direct.bin", "size", size))
                .get("file_id")
                .asText();
        AtomicLong sent = new AtomicLong();
        Generated body = new Generated(size, 7, sent);
        String url = server.base() + base(u) + "/" + id + "/content";
        CompletableFuture<Integer> upload = CompletableFuture.supplyAsync(() -> {
            try {
                return put(url, u.http().token(), body, size).statusCode();
            } catch (Exception e) {
                return -1; // the connection died with the server
            }
        });
        long deadline = System.currentTimeMillis() + 60_000;
        while (sent.get() < 200 * MIB) {
            assertTrue(
                    System.currentTimeMillis() < deadline && !upload.isDone(),
                    "the upload ended before the kill: " + upload.getNow(null));
            Thread.sleep(5);
        }
        server.killHard();
        assertEquals(-1, upload.get());

        server = AtriumServer.launch(data, db, env);
        Http http = new Http(server.base(), u.http().token());
        JsonNode listed = http.get(base(u) + "?path=crash").json();
        assertEquals(
                List.of("big.bin"),
                List.of(listed.path("files").get(0).path("name").asText()),
                listed.toString());
        assertEquals(1, listed.path("total").asInt(), listed.toString());
        assertEquals(
                0,
                listed.path("files").get(0).path("size").asLong(),
                "the file kept its old (empty) content: " + listed);

        long until = System.currentTimeMillis() + 30_000;
        while ((!StorageLimitsTest.notReferenced(db, data).isEmpty() || temps(data) > 0)
                && System.currentTimeMillis() < until) {
            Thread.sleep(250);
        }
        assertEquals(List.of(), StorageLimitsTest.notReferenced(db, data), "no blob that no file refers to");
        assertEquals(0, temps(data), "no temp file of the interrupted put");

        Generated again = new Generated(size, 7, new AtomicLong());
        HttpResponse<String> retried =
                put(server.base() + base(u) + "/" + id + "/content", u.http().token(), again, size);
        assertEquals(200, retried.statusCode(), retried.body());
        assertEquals(
                again.sha256(),
                Http.JSON.readTree(retried.body()).path("file").path("sha256").asText());
        // the direct upload announced before the crash still takes its bytes
        Generated direct = new Generated(size, 7, new AtomicLong());
        HttpResponse<String> up =
                put(server.base() + base(u) + "/upload/" + announced, u.http().token(), direct, size);
        assertEquals(200, up.statusCode(), up.body());
        Http.Reply confirmed = http.post(
                base(u) + "/confirm-upload", Map.of("file_id", announced, "size", size, "sha256", direct.sha256()));
        assertEquals(200, confirmed.status(), confirmed.body());
        assertEquals(2, http.get(base(u) + "?path=crash").json().path("total").asInt());
    }

    static long temps(Path data) throws IOException {
        Path temp = data.resolve("blobs/.tmp");
        if (!Files.isDirectory(temp)) {
            return 0;
        }
        try (Stream<Path> s = Files.list(temp)) {
            return s.count();
        }
    }
}
