package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Debian's pebble (the ACME test server, installed by {@code ./atrium test}) on loopback for one test class: its HTTPS
 * under a CA made with openssl (Atrium's {@code acmeTrustedCaFile}), resolving names through the test's {@link TestDns}
 * and fetching HTTP-01 challenges from Atrium's HTTP port. Made in two steps, as each side needs the other's port:
 * {@link #prepare} (then launch Atrium with {@link #env}) and {@link #start}.
 */
final class Pebble implements AutoCloseable {

    static final String BINARY = "/usr/bin/pebble";

    final Path dir;
    final int acmePort;
    final int managementPort;
    final SSLContext tls;
    private final TestDns dns;
    private Process process;

    private Pebble(Path dir, TestDns dns) throws Exception {
        this.dir = dir;
        this.dns = dns;
        // pebble's own HTTPS certificate, trusted by Atrium through its acmeTrustedCaFile setting
        Process openssl = new ProcessBuilder(
                        "openssl",
                        "req",
                        "-x509",
                        "-newkey",
                        "ec",
                        "-pkeyopt",
                        "ec_paramgen_curve:prime256v1",
                        "-nodes",
                        "-keyout",
                        dir.resolve("key.pem").toString(),
                        "-out",
                        dir.resolve("cert.pem").toString(),
                        "-days",
                        "2",
                        "-subj",
                        "/CN=localhost",
                        "-addext",
                        "subjectAltName=IP:127.0.0.1,DNS:localhost")
                .redirectErrorStream(true)
                .start();
        String out = new String(openssl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, openssl.waitFor(), out);
        this.tls = trusting(CertificateFactory.getInstance("X.509")
                .generateCertificate(Files.newInputStream(dir.resolve("cert.pem"))));
        this.acmePort = freePort();
        this.managementPort = freePort();
    }

    static boolean installed() {
        return Files.isExecutable(Path.of(BINARY));
    }

    static Pebble prepare(TestDns dns) throws Exception {
        return new Pebble(Files.createTempDirectory("atrium-acme-"), dns);
    }

    /** The server settings that make Atrium order from this pebble. */
    Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("ATRIUM_SERVICES_DNS_RESOLVER", "127.0.0.1:" + dns.port());
        env.put("ATRIUM_SERVICES_ACME_DIRECTORY_URL", "https://127.0.0.1:" + acmePort + "/dir");
        env.put("ATRIUM_SERVICES_ACME_CA_FILE", dir.resolve("cert.pem").toString());
        env.put("ATRIUM_SERVICES_ACME_EMAIL", "ops@example.test");
        return env;
    }

    /** Starts pebble, its HTTP-01 challenges fetched from {@code httpPort} (Atrium's); {@code extraEnv} for pebble itself. */
    void start(int httpPort, Map<String, String> extraEnv) throws Exception {
        Files.writeString(dir.resolve("pebble.json"), """
                {"pebble": {"listenAddress": "127.0.0.1:%d", "managementListenAddress": "127.0.0.1:%d",
                 "certificate": "%s", "privateKey": "%s", "httpPort": %d, "tlsPort": %d,
                 "ocspResponderURL": "", "externalAccountBindingRequired": false}}
                """.formatted(
                acmePort, managementPort, dir.resolve("cert.pem"), dir.resolve("key.pem"), httpPort, freePort()));
        ProcessBuilder pb = new ProcessBuilder(
                        BINARY,
                        "-config",
                        dir.resolve("pebble.json").toString(),
                        "-dnsserver",
                        "127.0.0.1:" + dns.port())
                .redirectErrorStream(true)
                .redirectOutput(Path.of("target", "pebble-" + acmePort + ".log").toFile());
        pb.environment().put("PEBBLE_VA_NOSLEEP", "1");
        pb.environment().put("PEBBLE_VA_ALWAYS_VALID", "0");
        pb.environment().put("PEBBLE_WFE_NONCEREJECT", "0");
        pb.environment().putAll(extraEnv);
        process = pb.start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!answers(acmePort) || !answers(managementPort)) {
            assertTrue(process.isAlive(), () -> "pebble exited: " + log(acmePort));
            assertTrue(System.nanoTime() < until, "pebble did not start listening");
            Thread.sleep(100);
        }
    }

    /** Its log's last lines, for a failure message: CI keeps the build's output, not the files under target. */
    private static String log(int acmePort) {
        try {
            java.util.List<String> lines = Files.readAllLines(Path.of("target", "pebble-" + acmePort + ".log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** The root certificate this pebble run issues under (a new one every start). */
    X509Certificate root() throws Exception {
        HttpResponse<String> r = HttpClient.newBuilder()
                .sslContext(tls)
                .build()
                .send(
                        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + managementPort + "/roots/0"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(r.body().getBytes(StandardCharsets.US_ASCII)));
    }

    /** A TLS context trusting {@code ca} only. */
    static SSLContext trusting(java.security.cert.Certificate ca) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        ks.setCertificateEntry("ca", ca);
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, f.getTrustManagers(), null);
        return ctx;
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) {
            process.destroy();
            process.waitFor(5, TimeUnit.SECONDS);
        }
        AtriumServer.deleteTree(dir.toFile());
    }

    static int freePort() throws IOException {
        return AtriumServer.freePort();
    }

    static boolean answers(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
