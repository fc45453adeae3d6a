package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The console's Operations view in a real browser ({@code itests/browser/console-operations.test.mjs}): a custom
 * domain's certificate near expiry, a configuration file of the deploy directory, an OAuth key rotation that the keys
 * table shows, and a dead federation delivery sent again with Retry.
 */
@SharedServer
class ConsoleOperationsBrowserTest {

    @Test
    void theOperationsViewShowsCertificatesAndDeployFilesRotatesTheOAuthKeyAndRetriesADeadDelivery(AtriumServer server)
            throws Exception {
        BrowserScripts.require("playwright-core");
        User u = server.newUser();
        String serviceId = ServicesTest.createService(u, ServicesTest.unique("ops-view"));
        String host = ServicesTest.unique("console") + ".example.test";
        Http.Reply added = u.http().post("/api/services/" + serviceId + "/custom-domains", Map.of("domain", host));
        assertEquals(201, added.status(), added.body());
        // a stored certificate valid for 10 days (ServiceCertificatesTest orders real ones from Pebble)
        X509Certificate cert = OperationsViewApiTest.selfSigned(host, 10);
        String deliveryId = "dlv_opsview" + Long.toString(System.nanoTime(), 36);
        try (Connection c = server.db.connect()) {
            try (PreparedStatement s = c.prepareStatement(
                    "INSERT INTO service_domain_certificates (domain_id, status, chain_pem, expires_at, issuer) "
                            + "VALUES (?, 'active', ?, ?, ?)")) {
                s.setString(1, added.get("domain").get("id").asText());
                s.setString(2, OperationsViewApiTest.pem(cert));
                s.setTimestamp(3, Timestamp.from(cert.getNotAfter().toInstant()));
                s.setString(4, cert.getIssuerX500Principal().getName());
                s.executeUpdate();
            }
            // queued as the federation core queues an activity; its inbox is no URL, so the real queue's first
            // attempt makes it a dead letter, and so does the attempt after a retry
            try (PreparedStatement s =
                    c.prepareStatement("INSERT INTO ap_deliveries (id, actor_uri, inbox, body) VALUES (?, ?, ?, ?)")) {
                s.setString(1, deliveryId);
                s.setString(2, server.base() + "/ap/stores/nobody");
                s.setString(3, "http://no such inbox/inbox");
                s.setBytes(4, "{}".getBytes(StandardCharsets.UTF_8));
                s.executeUpdate();
            }
        }
        Instant firstDead = deadAt(server, deliveryId, Instant.EPOCH);

        String before = currentKid(server);
        Path config = server.data.resolve("deploy").resolve("org.example.opsconsole.config");
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/console-operations.png");
        try {
            Files.writeString(config, "password=\"deploy-view-secret\"\n", StandardCharsets.UTF_8);
            int exit = BrowserScripts.run(
                    AtriumServer.ROOT.resolve("itests/target/browser-operations.log"),
                    "node",
                    "console-operations.test.mjs",
                    server.base(),
                    server.operatorToken(),
                    host,
                    config.getFileName().toString(),
                    deliveryId,
                    screenshot.toString());
            assertEquals(
                    0,
                    exit,
                    () -> "the browser test failed; its output is in itests/target/browser-operations.log, ending:\n"
                            + BrowserScripts.tail(AtriumServer.ROOT.resolve("itests/target/browser-operations.log")));
        } finally {
            Files.deleteIfExists(config);
        }
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
        assertNotEquals(before, currentKid(server), "the console rotated the OAuth signing key");
        deadAt(server, deliveryId, firstDead); // sent again, and dead again at its new first attempt
    }

    private static String currentKid(AtriumServer server) {
        for (JsonNode k : server.operator().get("/admin/oauth/keys").get("keys")) {
            if (k.get("state").asText().equals("current")) {
                return k.get("kid").asText();
            }
        }
        throw new AssertionError("no current OAuth signing key");
    }

    /** When the delivery became a dead letter, waiting until that is after {@code after}. */
    private static Instant deadAt(AtriumServer server, String id, Instant after) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        JsonNode last = null;
        while (System.currentTimeMillis() < deadline) {
            for (JsonNode d : server.operator()
                    .get("/admin/federation/deliveries?state=dead&limit=500")
                    .get("deliveries")) {
                if (d.get("id").asText().equals(id)) {
                    last = d;
                    Instant finished = Instant.parse(d.get("finished_at").asText());
                    if (finished.isAfter(after)) {
                        return finished;
                    }
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the delivery " + id + " did not become a dead letter after " + after + ": " + last);
    }
}
