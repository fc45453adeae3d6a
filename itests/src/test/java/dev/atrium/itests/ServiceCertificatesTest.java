package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Certificates for verified custom domains come from a real ACME server: Debian's pebble on loopback (provided by
 * {@code ./atrium test}), its HTTPS under a CA the test makes with openssl (the server's {@code acmeTrustedCaFile}),
 * resolving every name to 127.0.0.1 through the test's DNS server and fetching the HTTP-01 challenge from Atrium's own
 * port, so the challenge is answered by Atrium itself. The server's HTTPS listener ({@code ATRIUM_SERVICES_HTTPS_PORT})
 * serves them by SNI to the JDK's TLS client, trusting pebble's root only.
 */
class ServiceCertificatesTest {

    /** Says which service answered, and how the request reached it. */
    static final String TLS_WORKER = """
            export default {
              async fetch(request) {
                const url = new URL(request.url);
                return Response.json({ version: "VERSION", path: url.pathname, proto: request.headers.get("x-forwarded-proto"),
                                       host: request.headers.get("host") });
              }
            };
            """;

    private static AtriumServer server;
    private static TestDatabase db;
    private static TestDns dns;
    private static Pebble pebble;
    private static int httpsPort;

    @BeforeAll
    static void launch() throws Exception {
        Assumptions.assumeTrue(Pebble.installed(), "pebble is not installed (./atrium test installs it)");
        dns = new TestDns();
        pebble = Pebble.prepare(dns);
        httpsPort = Pebble.freePort();
        db = TestDatabase.create();
        Map<String, String> env = new java.util.HashMap<>(pebble.env());
        env.put("ATRIUM_SERVICES_HTTPS_PORT", "" + httpsPort);
        // the renewal task looks every second with the default window (30 days): it must leave fresh certificates alone
        env.put("ATRIUM_SERVICES_CERT_RENEW_CHECK_S", "1");
        server = AtriumServer.launch(Files.createTempDirectory("atrium-certs-"), db, env);
        // Atrium's HTTP port is where pebble fetches http://<domain>/.well-known/acme-challenge/<token>
        pebble.start(server.port, Map.of());
    }

    @AfterAll
    static void stop() throws Throwable {
        if (pebble != null) {
            pebble.close();
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
        JsonNode d =
                u.http().post(base, Map.of("domain", "secure.example.test")).get("domain");
        String domainId = d.get("id").asText();
        assertEquals("none", d.get("ssl").get("status").asText());

        // before verification: 409 with the spec body, nothing ordered
        Http.Reply early = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(409, early.status(), early.body());
        assertEquals("CONFLICT", early.errorCode());

        dns.txt.put(
                "_atrium-challenge.secure.example.test",
                d.get("verification").get("dns").get("value").asText());
        Http.Reply verified = u.http().post(base + "/" + domainId + "/verify", Map.of("method", "dns"));
        assertTrue(verified.get("verified").asBoolean(), verified.body());

        // another Principal cannot order (or see) it
        User stranger = server.newUser();
        assertEquals(
                404,
                stranger.http()
                        .post(base + "/" + domainId + "/refresh-ssl", null)
                        .status());

        Http.Reply issued = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(200, issued.status(), issued.body());
        JsonNode ssl = issued.get("domain").get("ssl");
        assertEquals("active", ssl.get("status").asText(), issued.body());
        assertTrue(
                Instant.parse(ssl.get("expires_at").asText())
                        .isAfter(Instant.now().plusSeconds(86_400)),
                issued.body());
        assertTrue(ssl.get("issuer").asText().contains("Pebble"), issued.body());
        assertTrue(ssl.get("error").isNull(), issued.body());
        JsonNode shown = u.http().get(base + "/" + domainId).get("domain").get("ssl");
        assertEquals("active", shown.get("status").asText());
        assertEquals(ssl.get("expires_at").asText(), shown.get("expires_at").asText());

        // the stored chain is for the domain and verifies against pebble's root; its private key is stored sealed
        List<X509Certificate> chain = new ArrayList<>();
        byte[] sealed;
        try (Connection c = db.connect();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT chain_pem, key_sealed FROM service_domain_certificates WHERE domain_id = ?")) {
            ps.setString(1, domainId);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                for (var cert : CertificateFactory.getInstance("X.509")
                        .generateCertificates(
                                new ByteArrayInputStream(rs.getString(1).getBytes(StandardCharsets.US_ASCII)))) {
                    chain.add((X509Certificate) cert);
                }
                sealed = rs.getBytes(2);
            }
        }
        assertNotNull(sealed);
        assertFalse(new String(sealed, StandardCharsets.ISO_8859_1).contains("PRIVATE KEY"));
        assertTrue(chain.get(0).getSubjectAlternativeNames().stream()
                .anyMatch(n -> n.get(1).equals("secure.example.test")));
        X509Certificate root = pebble.root();
        PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(root, null)));
        params.setRevocationEnabled(false);
        CertPathValidator.getInstance("PKIX")
                .validate(CertificateFactory.getInstance("X.509").generateCertPath(chain), params);

        // a second refresh orders a new certificate (the account is reused)
        Http.Reply again = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(200, again.status(), again.body());
        assertEquals("active", again.get("domain").get("ssl").get("status").asText());

        // a domain the ACME server cannot reach: 502 with the spec body, and the domain says why
        dns.noAddress.add("dark.example.test");
        JsonNode dark =
                u.http().post(base, Map.of("domain", "dark.example.test")).get("domain");
        dns.txt.put(
                "_atrium-challenge.dark.example.test",
                dark.get("verification").get("dns").get("value").asText());
        assertTrue(u.http()
                .post(base + "/" + dark.get("id").asText() + "/verify", Map.of("method", "dns"))
                .get("verified")
                .asBoolean());
        Http.Reply failed = u.http().post(base + "/" + dark.get("id").asText() + "/refresh-ssl", null);
        assertEquals(502, failed.status(), failed.body());
        assertEquals("CERTIFICATE_FAILED", failed.errorCode());
        JsonNode darkSsl =
                u.http().get(base + "/" + dark.get("id").asText()).get("domain").get("ssl");
        assertEquals("failed", darkSsl.get("status").asText());
        assertFalse(darkSsl.get("error").asText().isBlank());
        assertTrue(darkSsl.get("expires_at").isNull());
        assertTrue(
                Instant.parse(darkSsl.get("retry_at").asText())
                        .isAfter(Instant.now().plusSeconds(300)),
                "the renewal task backs off");
        // the other domain's certificate is untouched
        assertEquals(
                "active",
                u.http()
                        .get(base + "/" + domainId)
                        .get("domain")
                        .get("ssl")
                        .get("status")
                        .asText());

        // unknown ids answer 404 with the spec body
        Http.Reply missing = u.http().post(base + "/dom_missing/refresh-ssl", null);
        assertEquals(404, missing.status(), missing.body());
        assertEquals("NOT_FOUND", missing.errorCode());
    }

    @Test
    void eachVerifiedDomainIsServedOverHttpsWithItsOwnCertificateChosenBySniUntilItIsRemoved() throws Exception {
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique("https"));
        Http.Reply deployed = u.http()
                .post(
                        "/api/services/" + id + "/deployments",
                        Map.of(
                                "bundle",
                                Base64.getEncoder()
                                        .encodeToString(TLS_WORKER
                                                .replace("VERSION", "tls")
                                                .getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, deployed.status(), deployed.body());
        String base = "/api/services/" + id + "/custom-domains";
        String a = "tls-a.example.test";
        String b = "tls-b.example.test";
        String aId = verified(u, base, a);
        String bId = verified(u, base, b);
        SSLContext trust = Pebble.trusting(pebble.root());

        // verified, but no certificate yet: no TLS for the name (the HTTP port routes it as before)
        assertNoTls(trust, a);
        assertEquals(200, HostHttp.get(server.port, a, "/").status());

        assertEquals(200, u.http().post(base + "/" + aId + "/refresh-ssl", null).status());
        TlsClient.Answer first = TlsClient.get(httpsPort, trust, a, a, "/hello");
        assertEquals(200, first.response().status(), first.text());
        JsonNode answer = Http.JSON.readTree(first.text());
        assertEquals("tls", answer.get("version").asText(), first.text());
        assertEquals("/hello", answer.get("path").asText());
        assertEquals("https", answer.get("proto").asText(), "the worker sees the request came over HTTPS");
        assertEquals(a, answer.get("host").asText());
        assertEquals(
                storedLeaf(aId).getSerialNumber(),
                first.leaf().getSerialNumber(),
                "the stored certificate is the one served");
        assertTrue(names(first.leaf()).contains(a));

        // a second domain gets its own certificate on the same port; the first keeps its own
        assertNoTls(trust, b);
        assertEquals(200, u.http().post(base + "/" + bId + "/refresh-ssl", null).status());
        TlsClient.Answer second = TlsClient.get(httpsPort, trust, b, b, "/");
        assertEquals(200, second.response().status(), second.text());
        assertEquals(b, Http.JSON.readTree(second.text()).get("host").asText());
        assertTrue(names(second.leaf()).contains(b));
        assertFalse(names(second.leaf()).contains(a));
        assertEquals(storedLeaf(bId).getSerialNumber(), second.leaf().getSerialNumber());
        assertEquals(
                first.leaf().getSerialNumber(),
                TlsClient.handshake(httpsPort, trust, a).getSerialNumber());
        Thread.sleep(3_000); // three looks of the renewal task
        assertEquals(
                first.leaf().getSerialNumber(),
                storedLeaf(aId).getSerialNumber(),
                "a certificate far from expiry was renewed");
        assertEquals(
                first.leaf().getSerialNumber(),
                TlsClient.handshake(httpsPort, trust, a).getSerialNumber());

        // a Host other than the connection's name: 421 with the spec body, not the other service's answer
        TlsClient.Answer crossed = TlsClient.get(httpsPort, trust, b, a, "/");
        assertEquals(421, crossed.response().status(), crossed.text());
        assertEquals(
                "MISDIRECTED_REQUEST",
                Http.JSON.readTree(crossed.text()).get("error").get("code").asText());
        // a name nobody verified, and no name at all: no certificate, the handshake fails
        assertNoTls(trust, "stranger.example.test");
        assertNoTls(trust, null);

        // a verified domain with a certificate whose service runs nothing: 404 with the spec body; the API is not there
        String idle = ServicesTest.createService(u, ServicesTest.unique("idle"));
        String c = "tls-c.example.test";
        String cId = verified(u, "/api/services/" + idle + "/custom-domains", c);
        assertEquals(
                200,
                u.http()
                        .post("/api/services/" + idle + "/custom-domains/" + cId + "/refresh-ssl", null)
                        .status());
        TlsClient.Answer none = TlsClient.get(httpsPort, trust, c, c, "/healthz");
        assertEquals(404, none.response().status(), none.text());
        assertEquals(
                "NOT_FOUND",
                Http.JSON.readTree(none.text()).get("error").get("code").asText());
        assertEquals(
                200,
                HostHttp.get(server.port, c, "/healthz").status(),
                "over HTTP the name stays the API's, as before");

        // removing a domain stops serving its certificate at once, even to a client that would resume its TLS session;
        // the other's goes on
        SSLContext resuming = Pebble.trusting(pebble.root());
        TlsClient.Answer full = TlsClient.get(httpsPort, resuming, a, a, "/");
        TlsClient.Answer resumed = TlsClient.get(httpsPort, resuming, a, a, "/");
        assertEquals(
                full.sessionCreated(),
                resumed.sessionCreated(),
                "the client resumes its session while the domain is served");
        assertEquals(200, u.http().delete(base + "/" + aId).status());
        assertNoTls(trust, a);
        assertThrows(
                javax.net.ssl.SSLException.class,
                () -> TlsClient.get(httpsPort, resuming, a, a, "/"),
                "no resumed session for a removed domain");
        assertEquals(200, TlsClient.get(httpsPort, trust, b, b, "/").response().status());

        // the listener goes with the services capability (port closed) and comes back with it, serving the stored
        // certificates
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/services/disable", Map.of())
                            .status());
            assertFalse(Pebble.answers(httpsPort), "the HTTPS port is closed while the services capability is stopped");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/services/enable", Map.of())
                            .status());
        }
        RawHttp.Response back = null;
        for (int i = 0; i < 100; i++) {
            try {
                back = TlsClient.get(httpsPort, trust, b, b, "/").response();
                if (back.status() == 200) {
                    break;
                }
            } catch (IOException notYet) {
                // the capability is starting
            }
            Thread.sleep(100);
        }
        assertNotNull(back, "the HTTPS listener did not come back");
        assertEquals(200, back.status(), new String(back.body(), StandardCharsets.UTF_8));
    }

    /** A domain of the service at {@code base}, verified by its DNS record. */
    static String verified(User u, String base, String domain) {
        return verified(u, base, domain, dns);
    }

    /** Adds {@code domain} to the service at {@code base}, publishes its TXT record on {@code dns}, verifies it; its id. */
    static String verified(User u, String base, String domain, TestDns dns) {
        JsonNode d = u.http().post(base, Map.of("domain", domain)).get("domain");
        dns.txt.put(
                "_atrium-challenge." + domain,
                d.get("verification").get("dns").get("value").asText());
        Http.Reply v = u.http().post(base + "/" + d.get("id").asText() + "/verify", Map.of("method", "dns"));
        assertTrue(v.get("verified").asBoolean(), v.body());
        return d.get("id").asText();
    }

    static X509Certificate storedLeaf(String domainId) throws Exception {
        try (Connection c = db.connect();
                PreparedStatement ps =
                        c.prepareStatement("SELECT chain_pem FROM service_domain_certificates WHERE domain_id = ?")) {
            ps.setString(1, domainId);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                return (X509Certificate) CertificateFactory.getInstance("X.509")
                        .generateCertificate(
                                new ByteArrayInputStream(rs.getString(1).getBytes(StandardCharsets.US_ASCII)));
            }
        }
    }

    static List<String> names(X509Certificate x) throws Exception {
        List<String> names = new ArrayList<>();
        for (List<?> n : x.getSubjectAlternativeNames()) {
            names.add(String.valueOf(n.get(1)));
        }
        return names;
    }

    static void assertNoTls(SSLContext trust, String sni) {
        assertThrows(
                javax.net.ssl.SSLException.class,
                () -> TlsClient.handshake(httpsPort, trust, sni),
                "a TLS handshake for " + sni + " must fail");
    }
}
