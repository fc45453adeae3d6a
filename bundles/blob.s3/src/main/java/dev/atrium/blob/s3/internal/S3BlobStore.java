package dev.atrium.blob.s3.internal;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.blob.api.NoSuchBlobException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.commons.io.input.BoundedInputStream;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Blobs as objects of one bucket of an S3-compatible store, under their keys ({@code <namespace>/<sha256>}). The key
 * is known only once the bytes are hashed, so a put spools them to a local file while hashing and counting, then
 * uploads that file under the final key: in one PutObject, or, above {@code partSizeMiB}, as a multipart upload, which
 * S3 makes visible only when it is completed. An object under a final key is therefore always whole. A multipart
 * upload that fails is aborted; one a crash abandoned is aborted by the periodic sweep once it is older than
 * {@code staleUploadSeconds}.
 *
 * <p>Exists only when an operator configures it (ConfigurationPolicy.REQUIRE), and then ranks above the filesystem
 * store, so consumers that take "the" BlobStore take this one.
 */
@Component(
        service = BlobStore.class,
        configurationPid = "dev.atrium.blob.s3",
        configurationPolicy = ConfigurationPolicy.REQUIRE,
        immediate = true,
        property = {BlobStore.BACKEND + "=s3", "service.ranking:Integer=100"})
@Designate(ocd = S3BlobStore.Config.class)
public final class S3BlobStore implements BlobStore {

    @ObjectClassDefinition(name = "Atrium blobs on S3", description = "A BlobStore on an S3-compatible object store")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "The store's endpoint, e.g. https://s3.example.com (ATRIUM_BLOB_S3_ENDPOINT); empty: AWS for the region")
        String endpoint() default "";

        @AttributeDefinition(description = "The region (ATRIUM_BLOB_S3_REGION)")
        String region() default "us-east-1";

        @AttributeDefinition(description = "The bucket, which must exist (ATRIUM_BLOB_S3_BUCKET)")
        String bucket();

        @AttributeDefinition(
                description =
                        "The access key id (ATRIUM_BLOB_S3_ACCESS_KEY); empty with the secret: the AWS default credentials chain")
        String accessKey() default "";

        @AttributeDefinition(
                type = AttributeType.PASSWORD,
                description = "The secret access key (ATRIUM_BLOB_S3_SECRET_KEY)")
        String secretKey() default "";

        @AttributeDefinition(
                description =
                        "Path-style requests (http://host/bucket/key), as most S3-compatible stores want (ATRIUM_BLOB_S3_PATH_STYLE)")
        boolean pathStyle() default true;

        @AttributeDefinition(
                description =
                        "Size of one part of a multipart upload, and the size above which a put uses one, in MiB (5 to 5120)")
        int partSizeMiB() default 64;

        @AttributeDefinition(
                description =
                        "Seconds after which an incomplete multipart upload of a blob is taken for a crash's leftover and aborted")
        long staleUploadSeconds() default 86_400;

        @AttributeDefinition(
                description = "The data directory (--data, ATRIUM_DATA); puts are spooled in its blobs-s3-spool/")
        String dataDirectory() default "data";
    }

    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}/[0-9a-f]{64}");
    private static final int BUFFER = 64 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(S3BlobStore.class);

    private final S3Client s3;
    private final String bucket;
    private final Path spool;
    private final long partSize;
    private final Duration staleUpload;
    private final ScheduledExecutorService sweeper;

    @Activate
    public S3BlobStore(Config config) throws IOException {
        this(config, Path.of(config.dataDirectory()).toAbsolutePath().resolve("blobs-s3-spool"));
    }

    S3BlobStore(Config config, Path spool) throws IOException {
        if (config.bucket() == null || config.bucket().isBlank()) {
            throw new IllegalArgumentException("dev.atrium.blob.s3: bucket is not configured (ATRIUM_BLOB_S3_BUCKET)");
        }
        if (config.partSizeMiB() < 5 || config.partSizeMiB() > 5120) {
            throw new IllegalArgumentException(
                    "dev.atrium.blob.s3: partSizeMiB must be 5 to 5120, got " + config.partSizeMiB());
        }
        this.bucket = config.bucket().trim();
        this.partSize = config.partSizeMiB() * 1024L * 1024L;
        this.staleUpload = Duration.ofSeconds(Math.max(0, config.staleUploadSeconds()));
        this.spool = spool;
        Files.createDirectories(spool);
        removeSpoolFiles();
        this.s3 = client(config);
        String where = config.endpoint().isBlank()
                ? "AWS " + config.region()
                : config.endpoint().trim();
        sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "atrium-blob-s3-sweep");
            t.setDaemon(true);
            return t;
        });
        // off the activating thread: an endpoint that does not answer must not hold up the start of the runtime
        sweeper.execute(() -> {
            try {
                s3.headBucket(b -> b.bucket(bucket));
                LOG.info(
                        "blobs are kept in S3 bucket '{}' at {}{}",
                        bucket,
                        where,
                        config.pathStyle() ? " (path-style)" : "");
            } catch (SdkException e) {
                LOG.warn("S3 bucket '{}' at {} does not answer: {}", bucket, where, e.getMessage());
            }
        });
        long period = Math.min(3600, Math.max(10, staleUpload.toSeconds() / 2));
        var unused = sweeper.scheduleWithFixedDelay(
                () -> {
                    try {
                        abortStaleUploads();
                    } catch (RuntimeException e) {
                        LOG.warn(
                                "abandoned multipart uploads in S3 bucket '{}' could not be swept: {}",
                                bucket,
                                e.toString());
                    }
                },
                0,
                period,
                TimeUnit.SECONDS);
    }

    private static S3Client client(Config config) {
        AwsCredentialsProvider credentials =
                config.accessKey().isBlank() && config.secretKey().isBlank()
                        ? DefaultCredentialsProvider.builder().build()
                        : StaticCredentialsProvider.create(
                                AwsBasicCredentials.create(config.accessKey().trim(), config.secretKey()));
        S3ClientBuilder builder = S3Client.builder()
                .httpClient(UrlConnectionHttpClient.builder()
                        .connectionTimeout(Duration.ofSeconds(10))
                        .socketTimeout(Duration.ofMinutes(2))
                        .build())
                .region(Region.of(
                        config.region().isBlank()
                                ? "us-east-1"
                                : config.region().trim()))
                .credentialsProvider(credentials)
                .forcePathStyle(config.pathStyle())
                // the SDK's default CRC trailers (aws-chunked bodies) are not understood by every S3-compatible store;
                // the SHA-256 of every blob is checked by its key anyway
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        if (!config.endpoint().isBlank()) {
            builder.endpointOverride(URI.create(config.endpoint().trim()));
        }
        // the SDK finds its interceptors and services through the context class loader: this bundle's, where they are
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(S3BlobStore.class.getClassLoader());
        try {
            return builder.build();
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    @Deactivate
    void close() throws InterruptedException {
        sweeper.shutdownNow();
        sweeper.awaitTermination(10, TimeUnit.SECONDS);
        s3.close();
    }

    @Override
    public Blob put(String namespace, InputStream content, long maxBytes) throws IOException {
        if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException(
                    "a namespace is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must be 0 or more, got " + maxBytes);
        }
        Path file = Files.createTempFile(spool, "put-", ".part");
        try {
            MessageDigest sha = sha256();
            long size = 0;
            try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.WRITE)) {
                byte[] buffer = new byte[BUFFER];
                for (int n; (n = content.read(buffer)) != -1; ) {
                    size += n;
                    if (size > maxBytes) {
                        throw new BlobTooLargeException(maxBytes);
                    }
                    sha.update(buffer, 0, n);
                    out.write(buffer, 0, n);
                }
            }
            String key = namespace + "/" + HexFormat.of().formatHex(sha.digest());
            long length = size;
            try {
                HeadObjectResponse existing = head(key);
                if (existing == null) {
                    if (length <= partSize) {
                        s3.putObject(
                                b -> b.bucket(bucket)
                                        .key(key)
                                        .contentLength(length)
                                        .contentType("application/octet-stream"),
                                RequestBody.fromFile(file));
                    } else {
                        uploadInParts(key, file, length);
                    }
                    existing = head(key);
                    if (existing == null) {
                        throw new IOException(
                                "S3 bucket '" + bucket + "' does not show " + key + " after it was stored");
                    }
                }
                return blob(key, existing.contentLength(), existing.lastModified());
            } catch (SdkException e) {
                throw new IOException("S3 bucket '" + bucket + "' refused to keep " + key + ": " + e.getMessage(), e);
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Uploads {@code file} under {@code key} in parts; S3 shows the object only once all are there. */
    private void uploadInParts(String key, Path file, long size) throws IOException {
        String uploadId = s3.createMultipartUpload(
                        b -> b.bucket(bucket).key(key).contentType("application/octet-stream"))
                .uploadId();
        try {
            List<CompletedPart> parts = new ArrayList<>();
            // S3 takes at most 10,000 parts: a blob bigger than that many configured parts goes up in bigger ones
            long each = Math.max(partSize, (size + 9_999) / 10_000);
            int number = 1;
            for (long offset = 0; offset < size; offset += each, number++) {
                long from = offset;
                long length = Math.min(each, size - offset);
                int part = number;
                String etag = s3.uploadPart(
                                b -> b.bucket(bucket)
                                        .key(key)
                                        .uploadId(uploadId)
                                        .partNumber(part)
                                        .contentLength(length),
                                RequestBody.fromContentProvider(
                                        () -> slice(file, from, length), length, "application/octet-stream"))
                        .eTag();
                parts.add(CompletedPart.builder().partNumber(part).eTag(etag).build());
            }
            s3.completeMultipartUpload(
                    b -> b.bucket(bucket).key(key).uploadId(uploadId).multipartUpload(m -> m.parts(parts)));
        } catch (RuntimeException | Error e) {
            try {
                s3.abortMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(uploadId));
            } catch (RuntimeException abort) {
                e.addSuppressed(abort);
            }
            throw e;
        }
    }

    private static InputStream slice(Path file, long offset, long length) {
        try {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            channel.position(offset);
            return BoundedInputStream.builder()
                    .setInputStream(Channels.newInputStream(channel))
                    .setMaxCount(length)
                    .get();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Blob stat(String key) throws IOException {
        if (!wellFormed(key)) {
            return null;
        }
        try {
            HeadObjectResponse head = head(key);
            return head == null ? null : blob(key, head.contentLength(), head.lastModified());
        } catch (SdkException e) {
            throw new IOException(
                    "S3 bucket '" + bucket + "' did not say whether it holds " + key + ": " + e.getMessage(), e);
        }
    }

    @Override
    public InputStream open(String key, long offset, long length) throws IOException {
        Blob blob = stat(key);
        if (blob == null) {
            throw new NoSuchBlobException(key);
        }
        long size = blob.size();
        if (offset < 0 || offset > size || length < -1 || length > size - offset) {
            throw new IllegalArgumentException(
                    "range " + offset + "+" + length + " is not within the blob's " + size + " bytes");
        }
        long count = length == -1 ? size - offset : length;
        if (count == 0) {
            return InputStream.nullInputStream();
        }
        try {
            return s3.getObject(
                    b -> b.bucket(bucket).key(key).range("bytes=" + offset + "-" + (offset + count - 1)),
                    ResponseTransformer.toInputStream());
        } catch (NoSuchKeyException e) {
            throw new NoSuchBlobException(key);
        } catch (SdkException e) {
            throw new IOException("S3 bucket '" + bucket + "' did not serve " + key + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean delete(String key) throws IOException {
        if (stat(key) == null) {
            return false;
        }
        try {
            s3.deleteObject(b -> b.bucket(bucket).key(key));
            return true;
        } catch (SdkException e) {
            throw new IOException("S3 bucket '" + bucket + "' did not delete " + key + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Stream<Blob> list(String prefix) throws IOException {
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null");
        }
        try {
            // S3 lists keys in the order of their UTF-8 bytes: for these ASCII keys, key order; pages are fetched as
            // read
            return s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().stream()
                    .filter(o -> KEY.matcher(o.key()).matches())
                    .map(this::blob);
        } catch (SdkException e) {
            throw new IOException("S3 bucket '" + bucket + "' did not list '" + prefix + "': " + e.getMessage(), e);
        }
    }

    /**
     * Aborts the multipart uploads of blob keys begun before the configured age: what a crash midway through a put
     * left. The uploads of other keys in the bucket are left alone.
     *
     * @return how many were aborted
     */
    int abortStaleUploads() {
        Instant before = Instant.now().minus(staleUpload);
        int aborted = 0;
        for (MultipartUpload upload :
                s3.listMultipartUploadsPaginator(b -> b.bucket(bucket)).uploads()) {
            if (KEY.matcher(upload.key()).matches()
                    && upload.initiated() != null
                    && !upload.initiated().isAfter(before)) {
                try {
                    s3.abortMultipartUpload(
                            b -> b.bucket(bucket).key(upload.key()).uploadId(upload.uploadId()));
                    aborted++;
                } catch (S3Exception e) {
                    if (e.statusCode() != 404) {
                        throw e;
                    }
                }
            }
        }
        if (aborted > 0) {
            LOG.info("aborted {} abandoned multipart upload(s) in S3 bucket '{}'", aborted, bucket);
        }
        return aborted;
    }

    private HeadObjectResponse head(String key) {
        try {
            return s3.headObject(b -> b.bucket(bucket).key(key));
        } catch (NoSuchKeyException e) {
            return null;
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return null;
            }
            throw e;
        }
    }

    private Blob blob(S3Object object) {
        return blob(object.key(), object.size(), object.lastModified());
    }

    /** Seconds only: HEAD answers in an HTTP date, a listing in milliseconds, and both must give the same blob. */
    private static Blob blob(String key, long size, Instant modified) {
        return new Blob(key, size, key.substring(key.length() - 64), modified.truncatedTo(ChronoUnit.SECONDS));
    }

    private static boolean wellFormed(String key) {
        return key != null && KEY.matcher(key).matches();
    }

    /** Spool files are live only during a put of this component: any found at activation are a crash's. */
    private void removeSpoolFiles() throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(spool)) {
            for (Path file : files) {
                Files.deleteIfExists(file);
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
