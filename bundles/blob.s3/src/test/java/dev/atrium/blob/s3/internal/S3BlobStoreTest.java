package dev.atrium.blob.s3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobStoreContract;
import java.io.ByteArrayInputStream;
import java.lang.annotation.Annotation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.S3Object;

/** The S3 store passes the BlobStore contract against a real S3-compatible server (s3proxy) on loopback. */
class S3BlobStoreTest extends BlobStoreContract {

    static final String BUCKET = "atrium-blobs";

    @TempDir
    static Path dir;

    static S3Proxy proxy;
    static S3Client raw;
    static S3BlobStore store;

    @BeforeAll
    static void start() throws Exception {
        proxy = S3Proxy.start(dir);
        raw = proxy.client();
        raw.createBucket(b -> b.bucket(BUCKET));
        // 16 MiB parts: the contract's 64 MiB blob goes up as a multipart upload, smaller ones in one PutObject
        store = new S3BlobStore(config(proxy, 16, 86_400), dir.resolve("spool"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (store != null) {
            store.close();
        }
        if (raw != null) {
            raw.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    @Override
    protected BlobStore store() {
        return store;
    }

    @Override
    protected void assertNothingLeftBehind() throws Exception {
        assertEquals(List.of(), uploads(), "no multipart upload is left open");
        try (Stream<Path> spooled = Files.list(dir.resolve("spool"))) {
            assertEquals(List.of(), spooled.toList(), "no spool file is left");
        }
        List<String> foreign = raw.listObjectsV2Paginator(b -> b.bucket(BUCKET)).contents().stream()
                .map(S3Object::key)
                .filter(k -> !k.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}/[0-9a-f]{64}"))
                .toList();
        assertEquals(List.of(), foreign, "no object but blobs under their keys");
    }

    @Test
    void anAbandonedMultipartUploadOfABlobIsAbortedAndOthersAreLeftAlone() throws Exception {
        String blobKey = ns + "/" + sha256(new byte[] {1});
        String abandoned =
                raw.createMultipartUpload(b -> b.bucket(BUCKET).key(blobKey)).uploadId();
        raw.uploadPart(
                b -> b.bucket(BUCKET).key(blobKey).uploadId(abandoned).partNumber(1),
                RequestBody.fromBytes(random(6 << 20, 1)));
        String foreignKey = ns + "/not-a-blob";
        String foreign =
                raw.createMultipartUpload(b -> b.bucket(BUCKET).key(foreignKey)).uploadId();
        try {
            S3BlobStore young = new S3BlobStore(config(proxy, 16, 86_400), dir.resolve("spool-young"));
            try {
                assertEquals(0, young.abortStaleUploads(), "an upload younger than the age is spared");
            } finally {
                young.close();
            }
            S3BlobStore sweeping = new S3BlobStore(config(proxy, 16, 0), dir.resolve("spool-sweep"));
            try {
                sweeping.abortStaleUploads();
                List<String> open =
                        uploads().stream().map(MultipartUpload::uploadId).toList();
                assertFalse(open.contains(abandoned), "the blob's abandoned upload is aborted: " + open);
                assertTrue(
                        open.contains(foreign), "an upload of another key in the bucket is not the store's to abort");
                assertEquals(List.of(), keys(ns), "nothing of the aborted upload is listed");
            } finally {
                sweeping.close();
            }
        } finally {
            raw.abortMultipartUpload(b -> b.bucket(BUCKET).key(foreignKey).uploadId(foreign));
        }
        assertEquals(
                blobKey,
                store.put(ns, new ByteArrayInputStream(new byte[] {1}), 1).key(),
                "the same put works afterwards");
    }

    @Test
    void aSpoolFileACrashLeftIsRemovedAtActivation() throws Exception {
        Path spool = Files.createDirectories(dir.resolve("spool-crashed"));
        Path left = Files.write(spool.resolve("put-123.part"), random(1000, 3));
        S3BlobStore restarted = new S3BlobStore(config(proxy, 16, 86_400), spool);
        try {
            assertFalse(Files.exists(left), "the half-spooled put of the crashed process is gone");
            assertEquals(List.of(), keys(ns));
        } finally {
            restarted.close();
        }
    }

    @Test
    void theSecretKeyIsNeverLogged() throws Exception {
        store.put(ns, new ByteArrayInputStream(random(1000, 2)), 1000);
        store.list(ns).close();
        assertTrue(store.delete(ns + "/" + sha256(random(1000, 2))));
        // surefire sends this JVM's SLF4J output, the SDK's at DEBUG included, to this file (pom.xml)
        Path file = Path.of(System.getProperty("org.slf4j.simpleLogger.logFile"));
        String log = Files.readString(file);
        for (long until = System.currentTimeMillis() + 10_000;
                !log.contains("blobs are kept in S3 bucket") && System.currentTimeMillis() < until;
                log = Files.readString(file)) {
            Thread.sleep(50); // the store says where it keeps blobs once the bucket answered, off the activating thread
        }
        assertTrue(log.contains("blobs are kept in S3 bucket"), "the log is where the store writes");
        assertFalse(log.contains(S3Proxy.SECRET_KEY), "the secret key is in the log");
    }

    private static List<MultipartUpload> uploads() {
        return raw.listMultipartUploadsPaginator(b -> b.bucket(BUCKET)).uploads().stream()
                .toList();
    }

    static S3BlobStore.Config config(S3Proxy proxy, int partSizeMiB, long staleUploadSeconds) {
        return new S3BlobStore.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return S3BlobStore.Config.class;
            }

            @Override
            public String endpoint() {
                return proxy.endpoint.toString();
            }

            @Override
            public String region() {
                return "us-east-1";
            }

            @Override
            public String bucket() {
                return BUCKET;
            }

            @Override
            public String accessKey() {
                return S3Proxy.ACCESS_KEY;
            }

            @Override
            public String secretKey() {
                return S3Proxy.SECRET_KEY;
            }

            @Override
            public boolean pathStyle() {
                return true;
            }

            @Override
            public int partSizeMiB() {
                return partSizeMiB;
            }

            @Override
            public long staleUploadSeconds() {
                return staleUploadSeconds;
            }

            @Override
            public String dataDirectory() {
                return dir.toString();
            }
        };
    }
}
