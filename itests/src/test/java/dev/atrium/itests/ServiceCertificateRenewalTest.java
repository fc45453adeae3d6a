package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.math.BigInteger;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The renewal task against pebble (whose certificates last five years): with the renewal window set to a century, every
 * certificate is due at once, so the task (looking every second) renews each again and again, and the HTTPS listener
 * serves each new one without a restart. A claimed row is left alone by the task and by refresh-ssl; a failed renewal
 * backs off and the certificate issued before is still served.
 */
class ServiceCertificateRenewalTest {

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
        Map<String, String> env = new HashMap<>(pebble.env());
        env.put("ATRIUM_SERVICES_HTTPS_PORT", "" + httpsPort);
        env.put("ATRIUM_SERVICES_CERT_RENEW_DAYS", "36500");
        env.put("ATRIUM_SERVICES_CERT_RENEW_CHECK_S", "1");
        server = AtriumServer.launch(Files.createTempDirectory("atrium-renewals-"), db, env);
        // every order proves control again (pebble would otherwise reuse half of the valid authorizations)
        pebble.start(server.port, Map.of("PEBBLE_AUTHZREUSE", "0"));
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
    void certificatesDueForRenewalAreRenewedAndServedWithoutRestartOneOrderAtATimeAndBackOffAfterAFailure()
            throws Exception {
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique("renew"));
        String base = "/api/services/" + id + "/custom-domains";
        String name = "renew.example.test";
        String domainId = ServiceCertificatesTest.verified(u, base, name, dns);
        Http.Reply issued = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(200, issued.status(), issued.body());
        SSLContext trust = Pebble.trusting(pebble.root());

        // the task replaces the certificate, and the listener serves the new one (a new serial) with no restart
        BigInteger first = storedSerial(domainId);
        BigInteger renewed = eventually(
                () -> {
                    BigInteger served = TlsClient.servedSerial(httpsPort, trust, name);
                    return served != null && !served.equals(first) ? served : null;
                },
                30,
                "a renewed certificate served over TLS");
        assertNotEquals(first, renewed);
        JsonNode ssl = eventually(
                () -> {
                    JsonNode s =
                            u.http().get(base + "/" + domainId).get("domain").get("ssl");
                    return "active".equals(s.get("status").asText())
                                    || "pending".equals(s.get("status").asText())
                            ? s
                            : null;
                },
                10,
                "the domain's ssl");
        assertTrue(ssl.get("error").isNull(), ssl.toString());
        assertTrue(
                Instant.parse(ssl.get("expires_at").asText())
                        .isAfter(Instant.now().plusSeconds(86_400)),
                ssl.toString());

        // a row another order has claimed (on any instance) is left alone: by the task and by refresh-ssl (409)
        eventually(() -> claim(domainId) ? Boolean.TRUE : null, 30, "a moment no order holds the domain");
        BigInteger held = storedSerial(domainId);
        Http.Reply busy = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
        assertEquals(409, busy.status(), busy.body());
        assertEquals("CONFLICT", busy.errorCode());
        Thread.sleep(4_000);
        assertEquals(held, storedSerial(domainId), "no renewal while another order holds the domain");
        assertEquals(held, TlsClient.servedSerial(httpsPort, trust, name));
        update("UPDATE service_domain_certificates SET claimed_until = NULL WHERE domain_id = ?", domainId);
        eventually(
                () -> {
                    BigInteger s = TlsClient.servedSerial(httpsPort, trust, name);
                    return s != null && !s.equals(held) ? s : null;
                },
                30,
                "renewals going on once the claim is released");

        // the ACME server cannot reach the domain any more: the renewal fails, says why, backs off, and the certificate
        // issued before is still served
        dns.noAddress.add(name);
        JsonNode failed = eventually(
                () -> {
                    JsonNode s =
                            u.http().get(base + "/" + domainId).get("domain").get("ssl");
                    return "failed".equals(s.get("status").asText()) ? s : null;
                },
                60,
                "a failed renewal");
        assertFalse(failed.get("error").asText().isBlank(), failed.toString());
        assertTrue(
                Instant.parse(failed.get("retry_at").asText())
                        .isAfter(Instant.now().plusSeconds(300)),
                failed.toString());
        assertTrue(Instant.parse(failed.get("expires_at").asText()).isAfter(Instant.now()), failed.toString());
        BigInteger kept = storedSerial(domainId);
        assertEquals(kept, TlsClient.servedSerial(httpsPort, trust, name), "the last certificate is still served");
        String newContext = "the HTTPS listener took a new TLS context";
        int contextsBefore = count(server.fullLog(), newContext);
        // a domain verified meanwhile makes every instance reload the served certificates; the failed renewal's claim
        // and failure changed the row, not the certificate, so TLS sessions made before are still resumed (no new
        // context)
        ServiceCertificatesTest.verified(u, base, "renew-other.example.test", dns);
        Thread.sleep(4_000);
        JsonNode later = u.http().get(base + "/" + domainId).get("domain").get("ssl");
        assertEquals(failed, later, "no new try before retry_at");
        assertEquals(
                contextsBefore,
                count(server.fullLog(), newContext),
                "a failed renewal does not replace the listener's TLS context:\n" + server.fullLog());

        // removing the domain stops serving it at once
        assertEquals(200, u.http().delete(base + "/" + domainId).status());
        assertEquals(null, TlsClient.servedSerial(httpsPort, trust, name));
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    private static BigInteger storedSerial(String domainId) throws Exception {
        try (Connection c = db.connect();
                PreparedStatement ps =
                        c.prepareStatement("SELECT chain_pem FROM service_domain_certificates WHERE domain_id = ?")) {
            ps.setString(1, domainId);
            try (var rs = ps.executeQuery()) {
                assertTrue(rs.next());
                return ((java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                                .generateCertificate(new java.io.ByteArrayInputStream(
                                        rs.getString(1).getBytes(java.nio.charset.StandardCharsets.US_ASCII))))
                        .getSerialNumber();
            }
        }
    }

    /** Claims the domain's row as an order on another instance would, when none holds it. */
    private static boolean claim(String domainId) {
        return update(
                        "UPDATE service_domain_certificates SET claimed_until = now() + interval '1 hour' "
                                + "WHERE domain_id = ? AND claimed_until IS NULL AND status = 'active'",
                        domainId)
                == 1;
    }

    private static int update(String sql, String domainId) {
        try (Connection c = db.connect();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, domainId);
            return ps.executeUpdate();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static <T> T eventually(Supplier<T> probe, int seconds, String what) throws InterruptedException {
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        while (true) {
            T t = probe.get();
            if (t != null) {
                return t;
            }
            assertTrue(System.nanoTime() < until, "not within " + seconds + " s: " + what);
            Thread.sleep(200);
        }
    }
}
