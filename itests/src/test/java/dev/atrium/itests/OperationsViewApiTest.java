package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The read routes the console's Operations view needs besides the existing admin API: every custom domain's
 * certificate ({@code /admin/certificates}), the OAuth signing keys ({@code /admin/oauth/keys}) and the deploy
 * directory's files ({@code /admin/deploy}); all three answer the operator only.
 */
@SharedServer
class OperationsViewApiTest {

    private static final List<String> ROUTES = List.of("/admin/certificates", "/admin/oauth/keys", "/admin/deploy");

    @Test
    void theNewRoutesAnswerOnlyTheOperator(AtriumServer server) {
        for (String route : ROUTES) {
            BadInputTest.assertSpecError(server.anonymous().get(route), 401, "UNAUTHORIZED");
            BadInputTest.assertSpecError(server.newUser().http().get(route), 401, "UNAUTHORIZED");
            Http.Reply ok = server.operator().get(route);
            assertEquals(200, ok.status(), route + ": " + ok.body());
        }
    }

    @Test
    void certificatesListACustomDomainWithItsServiceWorkspaceAndCertificateDates(AtriumServer server) throws Exception {
        User u = server.newUser();
        String serviceId = ServicesTest.createService(u, ServicesTest.unique("certs"));
        String host = ServicesTest.unique("shop") + ".example.test";
        Http.Reply added = u.http().post("/api/services/" + serviceId + "/custom-domains", Map.of("domain", host));
        assertEquals(201, added.status(), added.body());
        String domainId = added.get("domain").get("id").asText();

        JsonNode pending = certificate(server, host);
        assertEquals(domainId, pending.get("domain_id").asText());
        assertEquals(serviceId, pending.get("service_id").asText());
        assertEquals(u.defaultSpaceId(), pending.get("space_id").asText());
        assertEquals("pending", pending.get("domain_status").asText());
        assertEquals("none", pending.get("state").asText());
        assertTrue(pending.get("not_after").isNull(), pending.toString());
        assertFalse(pending.get("near_expiry").asBoolean());

        // a certificate stored for it (ServiceCertificatesTest orders real ones from Pebble): a self-signed one valid
        // for 10 days, so within the 15-day warning; its key is left out, so it is never served
        X509Certificate cert = selfSigned(host, 10);
        try (Connection c = server.db.connect();
                PreparedStatement s = c.prepareStatement(
                        "INSERT INTO service_domain_certificates (domain_id, status, chain_pem, expires_at, issuer) "
                                + "VALUES (?, 'active', ?, ?, ?)")) {
            s.setString(1, domainId);
            s.setString(2, pem(cert));
            s.setTimestamp(3, Timestamp.from(cert.getNotAfter().toInstant()));
            s.setString(4, cert.getIssuerX500Principal().getName());
            s.executeUpdate();
        }
        JsonNode active = certificate(server, host);
        assertEquals("active", active.get("state").asText(), active.toString());
        assertEquals("acme", active.get("source").asText());
        assertEquals("CN=" + host, active.get("issuer").asText());
        assertTrue(active.get("self_signed").asBoolean(), active.toString());
        assertEquals(
                cert.getNotBefore().toInstant().toString(),
                active.get("not_before").asText());
        assertEquals(
                cert.getNotAfter().toInstant().toString(),
                active.get("not_after").asText());
        long days = active.get("days_left").asLong();
        assertTrue(days == 9 || days == 10, active.toString());
        assertTrue(active.get("near_expiry").asBoolean(), active.toString());
        assertFalse(server.operator().get("/admin/certificates").body().contains("PRIVATE KEY"));
    }

    @Test
    void oauthKeysShowTheCurrentKeyWithoutItsMaterialAndARotationMakesANewCurrentOne(AtriumServer server) {
        JsonNode before = server.operator().get("/admin/oauth/keys").get("keys");
        JsonNode current = only(before, k -> k.get("state").asText().equals("current"));
        assertEquals("RS256", current.get("algorithm").asText());
        assertTrue(current.get("published_until").isNull(), current.toString());
        assertEquals(1, count(before, k -> k.get("signing").asBoolean()), before.toString());
        for (JsonNode k : before) {
            assertEquals(
                    List.of("kid", "algorithm", "created_at", "signs_from", "state", "published_until", "signing"),
                    fieldNames(k),
                    "no key material: " + k);
        }

        Http.Reply rotated = server.operator().post("/admin/oauth/keys/rotate", Map.of());
        assertEquals(200, rotated.status(), rotated.body());
        String kid = rotated.get("kid").asText();
        JsonNode after = server.operator().get("/admin/oauth/keys").get("keys");
        JsonNode next = only(after, k -> k.get("state").asText().equals("current"));
        assertEquals(kid, next.get("kid").asText());
        assertNotEquals(current.get("kid").asText(), kid);
        assertFalse(next.get("signing").asBoolean(), "it signs only after the key sets cached elsewhere expired");
        JsonNode old =
                only(after, k -> k.get("kid").asText().equals(current.get("kid").asText()));
        assertEquals("retired", old.get("state").asText(), old.toString());
        // the database keeps microseconds of the rotation's instant
        assertEquals(
                java.time.Instant.parse(rotated.get("replaced_published_until").asText())
                        .truncatedTo(java.time.temporal.ChronoUnit.MILLIS),
                java.time.Instant.parse(old.get("published_until").asText())
                        .truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        assertTrue(old.get("signing").asBoolean(), "the replaced key signs until the new one starts: " + after);
    }

    @Test
    void theDeployDirectoryListsAConfigurationByPidAndAJarByItsInstalledBundleButNoContents(AtriumServer server)
            throws Exception {
        Path deploy = server.data.resolve("deploy");
        Path config = deploy.resolve("org.example.deploylisting.config");
        Path jar = deploy.resolve("deploy-listing-converter.jar");
        String secret = "deploy-listing-secret-" + System.nanoTime();
        try {
            Files.writeString(config, "password=\"" + secret + "\"\n", StandardCharsets.UTF_8);
            Files.copy(
                    Path.of(System.getProperty("atrium.testBundles")).resolve("org.osgi.util.converter-1.0.8.jar"),
                    jar);

            JsonNode listing = awaitListing(server, l -> {
                JsonNode j = file(l, jar.getFileName().toString());
                return j != null && "ACTIVE".equals(j.path("state").asText());
            });
            assertFalse(listing.toString().contains(secret), "no file's contents are answered");
            assertEquals(
                    deploy.toRealPath().toString(),
                    Path.of(listing.get("directory").asText()).toRealPath().toString());
            JsonNode c = file(listing, config.getFileName().toString());
            assertEquals("configuration", c.get("kind").asText());
            assertEquals("org.example.deploylisting", c.get("pid").asText());
            assertEquals(Files.size(config), c.get("size").asLong());
            assertTrue(c.get("symbolic_name").isNull(), c.toString());
            JsonNode j = file(listing, jar.getFileName().toString());
            assertEquals("bundle", j.get("kind").asText());
            assertEquals("org.osgi.util.converter", j.get("symbolic_name").asText(), j.toString());
            assertTrue(j.get("version").asText().startsWith("1.0.8"), j.toString());
            assertEquals(Files.size(jar), j.get("size").asLong());
            assertTrue(j.get("pid").isNull(), j.toString());
        } finally {
            Files.deleteIfExists(config);
            Files.deleteIfExists(jar);
        }
        awaitListing(server, l -> file(l, jar.getFileName().toString()) == null);
        // FileInstall uninstalls it and refreshes: the server is ready again before the next test
        for (int i = 0; i < 200 && !converterGone(server); i++) {
            Thread.sleep(100);
        }
        assertTrue(converterGone(server), "FileInstall uninstalled the jar's bundle");
        assertEquals(
                200,
                FeatureSwitchTest.await(server.anonymous(), "/healthz", 200).status());
    }

    private static boolean converterGone(AtriumServer server) {
        return !server.operator().get("/admin/bundles").body().contains("\"org.osgi.util.converter\"");
    }

    private static JsonNode awaitListing(AtriumServer server, Predicate<JsonNode> condition)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        JsonNode listing;
        do {
            Http.Reply r = server.operator().get("/admin/deploy");
            assertEquals(200, r.status(), r.body());
            listing = r.json();
            if (condition.test(listing)) {
                return listing;
            }
            Thread.sleep(100);
        } while (System.currentTimeMillis() < deadline);
        throw new AssertionError("the deploy directory's listing did not change as expected: " + listing);
    }

    private static JsonNode file(JsonNode listing, String name) {
        for (JsonNode f : listing.get("files")) {
            if (f.get("name").asText().equals(name)) {
                return f;
            }
        }
        return null;
    }

    private static JsonNode certificate(AtriumServer server, String host) {
        Http.Reply r = server.operator().get("/admin/certificates");
        assertEquals(200, r.status(), r.body());
        JsonNode found = only(r.get("certificates"), c -> c.get("host").asText().equals(host));
        assertNotNull(found, r.body());
        return found;
    }

    private static JsonNode only(JsonNode list, Predicate<JsonNode> which) {
        JsonNode found = null;
        for (JsonNode n : list) {
            if (which.test(n)) {
                assertTrue(found == null, "more than one matches in " + list);
                found = n;
            }
        }
        assertNotNull(found, "none matches in " + list);
        return found;
    }

    private static long count(JsonNode list, Predicate<JsonNode> which) {
        long n = 0;
        for (JsonNode x : list) {
            if (which.test(x)) {
                n++;
            }
        }
        return n;
    }

    private static List<String> fieldNames(JsonNode n) {
        List<String> names = new java.util.ArrayList<>();
        n.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** A self-signed EC certificate for {@code host}, valid for {@code days} from now, made by the JDK's keytool. */
    static X509Certificate selfSigned(String host, int days) throws Exception {
        Path dir = Files.createTempDirectory("atrium-cert-");
        Path store = dir.resolve("k.p12");
        Path out = dir.resolve("c.pem");
        String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(List.of(
                keytool,
                "-genkeypair",
                "-keystore",
                store.toString(),
                "-storepass",
                "changeit",
                "-alias",
                "c",
                "-keyalg",
                "EC",
                "-dname",
                "CN=" + host,
                "-validity",
                String.valueOf(days)));
        run(List.of(
                keytool,
                "-exportcert",
                "-rfc",
                "-keystore",
                store.toString(),
                "-storepass",
                "changeit",
                "-alias",
                "c",
                "-file",
                out.toString()));
        try (var in = Files.newInputStream(out)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    private static void run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", command) + ": " + output);
    }

    static String pem(X509Certificate cert) throws Exception {
        return "-----BEGIN CERTIFICATE-----\n"
                + java.util.Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(cert.getEncoded())
                + "\n-----END CERTIFICATE-----\n";
    }
}
