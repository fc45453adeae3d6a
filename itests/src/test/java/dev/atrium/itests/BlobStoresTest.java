package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * The runtime's BlobStore: the filesystem store by default, the S3 one when (and only when) a bucket is configured,
 * which consumers then get instead; switching is configuration. Both used through the service, in the real runtime.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class BlobStoresTest {

    private static final String BLOB_STORE = "dev.atrium.blob.api.BlobStore";

    @Test
    void theFilesystemStoreServesByDefaultAndTheUnconfiguredS3StoreIsNoProblem(@TempDir Path tmp) throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp)) {
            runtime.assertHealthy(60_000);
            assertEquals(List.of(), runtime.problems());
            BundleContext context = runtime.framework.getBundleContext();
            assertEquals(List.of("fs"), backends(context), "one BlobStore, the filesystem's");

            byte[] bytes = "kept on disk".getBytes(StandardCharsets.UTF_8);
            String key = put(context, "itest", bytes);
            String hash = sha256(bytes);
            assertEquals("itest/" + hash, key);
            Path file = runtime.data
                    .resolve("blobs/itest")
                    .resolve(hash.substring(0, 2))
                    .resolve(hash.substring(2, 4))
                    .resolve(hash);
            assertTrue(Files.isRegularFile(file), file + " holds the blob");
            assertTrue(Files.isDirectory(runtime.data.resolve("blobs/.tmp")));
        }
    }

    @Test
    void configuringABucketSwitchesConsumersToTheS3Store(@TempDir Path tmp) throws Exception {
        S3 s3 = S3.start(tmp);
        try {
            Map<String, String> configured = Map.of(
                    "atrium.blob.s3.endpoint",
                    s3.endpoint(),
                    "atrium.blob.s3.bucket",
                    "atrium",
                    "atrium.blob.s3.accessKey",
                    "itest",
                    "atrium.blob.s3.secretKey",
                    s3.secret);
            try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp.resolve("runtime"), configured)) {
                runtime.assertHealthy(60_000);
                BundleContext context = runtime.framework.getBundleContext();
                long deadline = System.currentTimeMillis() + 30_000;
                while (backends(context).size() < 2 && System.currentTimeMillis() < deadline) {
                    Thread.sleep(100);
                }
                assertEquals(List.of("s3", "fs"), backends(context), "both, the S3 store ranked first");

                byte[] bytes = "kept in the bucket".getBytes(StandardCharsets.UTF_8);
                String hash = sha256(bytes);
                assertEquals("itest/" + hash, put(context, "itest", bytes), "the store a consumer gets is the S3 one");
                assertTrue(
                        Files.isRegularFile(s3.data.resolve("atrium/itest").resolve(hash)),
                        "the object is in the bucket");
                assertFalse(Files.exists(runtime.data.resolve("blobs/itest")), "nothing went to the filesystem store");
                Object store = service(context);
                try (InputStream in = (InputStream) method(store, "open", 1).invoke(store, "itest/" + hash)) {
                    assertEquals("kept in the bucket", new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
            }
        } finally {
            s3.close();
        }
    }

    @Test
    void theServerTakesS3FromTheEnvironmentAndGoesBackToTheFilesystemWhenTheBucketIsUnset(@TempDir Path tmp)
            throws Throwable {
        S3 s3 = S3.start(tmp);
        TestDatabase db = TestDatabase.create();
        Path data = tmp.resolve("data");
        try {
            AtriumServer withBucket = AtriumServer.launch(
                    data,
                    db,
                    Map.of(
                            "ATRIUM_BLOB_S3_ENDPOINT",
                            s3.endpoint(),
                            "ATRIUM_BLOB_S3_BUCKET",
                            "atrium",
                            "ATRIUM_BLOB_S3_ACCESS_KEY",
                            "itest",
                            "ATRIUM_BLOB_S3_SECRET_KEY",
                            s3.secret));
            String log;
            try {
                log = awaitLog(withBucket, "blobs are kept in S3 bucket 'atrium' at " + s3.endpoint());
            } finally {
                withBucket.stop(); // not close(): that would delete the data directory the next start reuses
            }
            assertFalse(log.contains(s3.secret), "the secret key is not in the server's log");

            // the configuration made for the bucket is removed with it: the S3 store does not come back empty and fail
            AtriumServer without = AtriumServer.launch(data, db, Map.of());
            try {
                Thread.sleep(2_000);
                assertFalse(without.fullLog().contains("S3 bucket"), without.tail());
                assertFalse(without.fullLog().contains("dev.atrium.blob.s3"), without.tail());
            } finally {
                without.close();
            }
        } finally {
            s3.close();
            db.close();
        }
    }

    private static String awaitLog(AtriumServer server, String line) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        while (!server.fullLog().contains(line) && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        assertTrue(server.fullLog().contains(line), server.tail());
        return server.fullLog();
    }

    /** s3proxy (Maven Central) on a free loopback port, its own process, its filesystem backend with a bucket "atrium". */
    private record S3(Process process, int port, Path data, String secret) implements AutoCloseable {
        static S3 start(Path tmp) throws Exception {
            int port;
            port = AtriumServer.freePort();
            Path data = Files.createDirectories(tmp.resolve("s3"));
            Files.createDirectories(data.resolve("atrium")); // the filesystem backend's bucket is a directory
            String secret = "itest-secret-" + System.nanoTime();
            Path properties = tmp.resolve("s3proxy.properties");
            Files.writeString(
                    properties,
                    String.join(
                            "\n",
                            "s3proxy.endpoint=http://127.0.0.1:" + port,
                            "s3proxy.authorization=aws-v2-or-v4",
                            "s3proxy.identity=itest",
                            "s3proxy.credential=" + secret,
                            "jclouds.provider=filesystem-nio2",
                            "jclouds.filesystem.basedir=" + data,
                            "jclouds.identity=itest",
                            "jclouds.credential=" + secret,
                            ""));
            Process process = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx256m",
                            "-jar",
                            System.getProperty("s3proxy.jar"),
                            "--properties",
                            properties.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(tmp.resolve("s3proxy.log").toFile())
                    .start();
            S3 s3 = new S3(process, port, data, secret);
            try {
                awaitPort(port, process);
            } catch (Exception e) {
                s3.close();
                throw e;
            }
            return s3;
        }

        String endpoint() {
            return "http://127.0.0.1:" + port;
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    /** The {@code atrium.blob.store} of each BlobStore service, highest ranked first (the order getServiceReference picks). */
    private static List<String> backends(BundleContext context) throws Exception {
        ServiceReference<?>[] refs = context.getAllServiceReferences(BLOB_STORE, null);
        List<ServiceReference<?>> sorted = new ArrayList<>(refs == null ? List.of() : List.of(refs));
        sorted.sort((a, b) -> b.compareTo(a));
        return sorted.stream()
                .map(r -> String.valueOf(r.getProperty("atrium.blob.store")))
                .toList();
    }

    /** The BlobStore a consumer that takes "the" BlobStore gets: the highest ranked. */
    private static Object service(BundleContext context) throws Exception {
        // getAll…: the system bundle, whose context this is, does not wire to blob.api, so the assignability filter
        // would hide it
        ServiceReference<?>[] refs = context.getAllServiceReferences(BLOB_STORE, null);
        assertNotNull(refs, "a BlobStore is registered");
        ServiceReference<?> first = refs[0];
        for (ServiceReference<?> ref : refs) {
            if (ref.compareTo(first) > 0) {
                first = ref;
            }
        }
        return context.getService(first);
    }

    /** Puts through the service; blob.api's classes are the framework's, not this test's, so by reflection. */
    private static String put(BundleContext context, String namespace, byte[] bytes) throws Exception {
        Object store = service(context);
        Object blob = store.getClass()
                .getMethod("put", String.class, InputStream.class, long.class)
                .invoke(store, namespace, new ByteArrayInputStream(bytes), (long) bytes.length);
        Method key = blob.getClass().getMethod("key");
        return (String) key.invoke(blob);
    }

    private static Method method(Object target, String name, int parameters) {
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == parameters) {
                return m;
            }
        }
        throw new IllegalStateException(target.getClass() + " has no " + name);
    }

    private static void awaitPort(int port, Process process) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            try (Socket probe = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (java.io.IOException notYet) {
                if (!process.isAlive() || System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("s3proxy did not start");
                }
                Thread.sleep(50);
            }
        }
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
