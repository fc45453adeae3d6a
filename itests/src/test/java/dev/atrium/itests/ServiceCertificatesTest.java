package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.atrium.itests.AtriumServer.User;

/**
 * Certificates for verified custom domains come from a real ACME server: Debian's pebble on loopback (provided by
 * {@code ./atrium test}), its HTTPS under a CA the test makes with openssl (the server's {@code acmeTrustedCaFile}),
 * resolving every name to 127.0.0.1 through the test's DNS server and fetching the HTTP-01 challenge from Atrium's own
 * port, so the challenge is answered by Atrium itself.
 */
class ServiceCertificatesTest {

    private static final String PEBBLE = "/usr/bin/pebble";
    private static AtriumServer server;
    private static TestDatabase db;
    private static TestDns dns;
    private static Process pebble;
    private static int managementPort;
    private static SSLContext pebbleTls;

    @BeforeAll
    static void launch() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of(PEBBLE)), "pebble is not installed (./atrium test installs it)");
        Path dir = Files.createTempDirectory("atrium-acme-");
        // pebble's own HTTPS certificate, trusted by Atrium through its acmeTrustedCaFile setting
        Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", dir.resolve("key.pem").toString(), "-out", dir.resolve("cert.pem").toString(), "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost").redirectErrorStream(true).start();
        String out = new String(openssl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, openssl.waitFor(), out);
        pebbleTls = tls(dir.resolve("cert.pem"));
        dns = new TestDns();
        int acmePort = freePort();
        managementPort = freePort();
        db = TestDatabase.create();
        server = AtriumServer.launch(Files.createTempDirectory("atrium-certs-"), db, Map.of(
                "ATRIUM_SERVICES_DNS_RESOLVER", "127.0.0.1:" + dns.port(),
                "ATRIUM_SERVICES_ACME_DIRECTORY_URL", "https://127.0.0.1:" + acmePort + "/dir",
                "ATRIUM_SERVICES_ACME_CA_FILE", dir.resolve("cert.pem").toString(),
                "ATRIUM_SERVICES_ACME_EMAIL", "ops@example.test"));
        // Atrium's HTTP port is where pebble fetches http://<domain>/.well-known/acme-challenge/<token>
        Files.writeString(dir.resolve("pebble.json"), """
                {"pebble": {"listenAddress": "127.0.0.1:%d", "managementListenAddress": "127.0.0.1:%d",
                 "certificate": "%s", "privateKey": "%s", "httpPort": %d, "tlsPort": %d,
                 "ocspResponderURL": "", "externalAccountBindingRequired": false}}
                """.formatted(acmePort, managementPort, dir.resolve("cert.pem"), dir.resolve("key.pem"), server.port, freePort()));
        ProcessBuilder pb = new ProcessBuilder(PEBBLE, "-config", dir.resolve("pebble.json").toString(), "-dnsserver", "127.0.0.1:" + dns.port())
                .redirectErrorStream(true).redirectOutput(Path.of("target", "pebble-" + acmePort + ".log").toFile());
        pb.environment().put("PEBBLE_VA_NOSLEEP", "1");
        pb.environment().put("PEBBLE_VA_ALWAYS_VALID", "0");
        pb.environment().put("PEBBLE_WFE_NONCEREJECT", "0");
        pebble = pb.start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!answers(acmePort) || !answers(managementPort)) {
            assertTrue(pebble.isAlive(), "pebble exited; see itests/target/pebble-" + acmePort + ".log");
            assertTrue(System.nanoTime() < until, "pebble did not start listening");
            Thread.sleep(100);
        }
    }

    @AfterAll
    static void stop() throws Throwable {
        if (pebble != null) {
            pebble.destroy();
            pebble.waitFor(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.close();
        }
        if (dns != null) {
            dns.close();
        }
    }

    @Test
    void aVerifiedDomainGetsACertificateFromTheAcmeServerThatChainsToItsRoot() throws Exception {
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique("certs"));
        String base = "/api/services/" + id + "/custom-domains";
        JsonNode d = u.http().post(base, Map.of("domain", "secure.example.test")).get("domain");
        String domainId = d.get("id").asText();
        assertEquals("none", d.get("ssl").get("status").asText());

        // before verification: 409 with the spec body, nothing ordered
        Http.Reply early = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(409, early.status(), early.body());
        assertEquals("CONFLICT", early.errorCode());

        dns.txt.put("_atrium-challenge.secure.example.test", d.get("verification").get("dns").get("value").asText());
        Http.Reply verified = u.http().post(base + "/" + domainId + "/verify", Map.of("method", "dns"));
        assertTrue(verified.get("verified").asBoolean(), verified.body());

        // another Principal cannot order (or see) it
        User stranger = server.newUser();
        assertEquals(404, stranger.http().post(base + "/" + domainId + "/refresh-ssl", null).status());

        Http.Reply issued = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(200, issued.status(), issued.body());
        JsonNode ssl = issued.get("domain").get("ssl");
        assertEquals("active", ssl.get("status").asText(), issued.body());
        assertTrue(Instant.parse(ssl.get("expires_at").asText()).isAfter(Instant.now().plusSeconds(86_400)), issued.body());
        assertTrue(ssl.get("issuer").asText().contains("Pebble"), issued.body());
        assertTrue(ssl.get("error").isNull(), issued.body());
        JsonNode shown = u.http().get(base + "/" + domainId).get("domain").get("ssl");
        assertEquals("active", shown.get("status").asText());
        assertEquals(ssl.get("expires_at").asText(), shown.get("expires_at").asText());

        // the stored chain is for the domain and verifies against pebble's root; its private key is stored sealed
        List<X509Certificate> chain = new ArrayList<>();
        byte[] sealed;
        try (Connection c = db.connect();
                PreparedStatement ps = c.prepareStatement("SELECT chain_pem, key_sealed FROM service_domain_certificates WHERE domain_id = ?")) {
            ps.setString(1, domainId);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                for (var cert : CertificateFactory.getInstance("X.509")
                        .generateCertificates(new ByteArrayInputStream(rs.getString(1).getBytes(StandardCharsets.US_ASCII)))) {
                    chain.add((X509Certificate) cert);
                }
                sealed = rs.getBytes(2);
            }
        }
        assertNotNull(sealed);
        assertFalse(new String(sealed, StandardCharsets.ISO_8859_1).contains("PRIVATE KEY"));
        assertTrue(chain.get(0).getSubjectAlternativeNames().stream().anyMatch(n -> n.get(1).equals("secure.example.test")));
        X509Certificate root = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(get("https://127.0.0.1:" + managementPort + "/roots/0").getBytes(StandardCharsets.US_ASCII)));
        PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(root, null)));
        params.setRevocationEnabled(false);
        CertPathValidator.getInstance("PKIX").validate(CertificateFactory.getInstance("X.509").generateCertPath(chain), params);

        // a second refresh orders a new certificate (the account is reused)
        Http.Reply again = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(200, again.status(), again.body());
        assertEquals("active", again.get("domain").get("ssl").get("status").asText());

        // a domain the ACME server cannot reach: 502 with the spec body, and the domain says why
        dns.noAddress.add("dark.example.test");
        JsonNode dark = u.http().post(base, Map.of("domain", "dark.example.test")).get("domain");
        dns.txt.put("_atrium-challenge.dark.example.test", dark.get("verification").get("dns").get("value").asText());
        assertTrue(u.http().post(base + "/" + dark.get("id").asText() + "/verify", Map.of("method", "dns")).get("verified").asBoolean());
        Http.Reply failed = u.http().post(base + "/" + dark.get("id").asText() + "/refresh-ssl", null);
        assertEquals(502, failed.status(), failed.body());
        assertEquals("CERTIFICATE_FAILED", failed.errorCode());
        JsonNode darkSsl = u.http().get(base + "/" + dark.get("id").asText()).get("domain").get("ssl");
        assertEquals("failed", darkSsl.get("status").asText());
        assertFalse(darkSsl.get("error").asText().isBlank());
        assertTrue(darkSsl.get("expires_at").isNull());
        // the other domain's certificate is untouched
        assertEquals("active", u.http().get(base + "/" + domainId).get("domain").get("ssl").get("status").asText());

        // unknown ids answer 404 with the spec body
        Http.Reply missing = u.http().post(base + "/dom_missing/refresh-ssl", null);
        assertEquals(404, missing.status(), missing.body());
        assertEquals("NOT_FOUND", missing.errorCode());
    }

    private static String get(String url) throws Exception {
        HttpResponse<String> r = HttpClient.newBuilder().sslContext(pebbleTls).build()
                .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    private static SSLContext tls(Path caPem) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (var in = Files.newInputStream(caPem)) {
            ks.setCertificateEntry("pebble", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, f.getTrustManagers(), null);
        return ctx;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static boolean answers(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
