package dev.atrium.blob.s3.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3-compatible server for tests: s3proxy (Maven Central, its filesystem backend), started as its own
 * {@code java -jar} process on a free loopback port, with a directory of its own.
 */
final class S3Proxy implements AutoCloseable {
    static final String ACCESS_KEY = "atrium-test";
    static final String SECRET_KEY = "s3cr3t-never-logged-" + Long.toHexString(System.nanoTime());

    final URI endpoint;
    private final Process process;
    private final Path log;

    private S3Proxy(URI endpoint, Process process, Path log) {
        this.endpoint = endpoint;
        this.process = process;
        this.log = log;
    }

    static S3Proxy start(Path dir) throws Exception {
        String jar = System.getProperty("s3proxy.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException(
                    "system property s3proxy.jar names no file (set by the pom's surefire configuration): " + jar);
        }
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path data = Files.createDirectories(dir.resolve("data"));
        Path properties = dir.resolve("s3proxy.properties");
        Files.writeString(
                properties,
                String.join(
                        "\n",
                        "s3proxy.endpoint=http://127.0.0.1:" + port,
                        "s3proxy.authorization=aws-v2-or-v4",
                        "s3proxy.identity=" + ACCESS_KEY,
                        "s3proxy.credential=" + SECRET_KEY,
                        "jclouds.provider=filesystem-nio2",
                        "jclouds.filesystem.basedir=" + data,
                        "jclouds.identity=" + ACCESS_KEY,
                        "jclouds.credential=" + SECRET_KEY,
                        ""));
        Path log = dir.resolve("s3proxy.log");
        Process process = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx256m",
                        "-jar",
                        jar,
                        "--properties",
                        properties.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        S3Proxy proxy = new S3Proxy(URI.create("http://127.0.0.1:" + port), process, log);
        long started = System.nanoTime();
        long deadline = started + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Socket probe = new Socket(InetAddress.getLoopbackAddress(), port)) {
                break;
            } catch (IOException notYet) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    proxy.close();
                    throw new IllegalStateException("s3proxy did not start: " + Files.readString(log));
                }
                Thread.sleep(50);
            }
        }
        System.out.printf(
                "s3proxy %s listening after %d ms%n",
                proxy.endpoint, Duration.ofNanos(System.nanoTime() - started).toMillis());
        return proxy;
    }

    /** A plain client of the server, for what a test does behind the store's back. */
    S3Client client() {
        return S3Client.builder()
                .httpClient(UrlConnectionHttpClient.create())
                .region(Region.US_EAST_1)
                .endpointOverride(endpoint)
                .forcePathStyle(true)
                .credentialsProvider(
                        StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .build();
    }

    String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
