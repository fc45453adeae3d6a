package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Federation with a real, independent ActivityPub implementation: a Fedify server (Node 22) on loopback against an
 * Atrium instance of its own that serves HTTPS (Fedify resolves {@code acct:} handles over HTTPS only) with a
 * self-signed certificate the peer trusts. Everything Fedify does here — WebFinger, fetching and parsing documents,
 * signing and verifying HTTP Signatures — is Fedify's own code.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FedifyInteropTest {

    private Path dir;
    private AtriumServer atrium;
    private FedifyPeer peer;
    private String origin;

    @BeforeAll
    void start() throws Exception {
        dir = Files.createTempDirectory("atrium-fedify-");
        Path keystore = dir.resolve("tls.p12");
        Path cert = dir.resolve("tls.pem");
        String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(
                keytool,
                "-genkeypair",
                "-alias",
                "atrium",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-validity",
                "2",
                "-dname",
                "CN=127.0.0.1",
                "-ext",
                "SAN=ip:127.0.0.1",
                "-keystore",
                keystore.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                "changeit",
                "-keypass",
                "changeit");
        Files.writeString(
                cert,
                run(
                        keytool,
                        "-exportcert",
                        "-rfc",
                        "-alias",
                        "atrium",
                        "-keystore",
                        keystore.toString(),
                        "-storepass",
                        "changeit"));
        int https = AtriumServer.freePort();
        origin = "https://127.0.0.1:" + https;
        String opts = "-XX:+UseSerialGC -Xms64m -Xmx768m -XX:MaxMetaspaceSize=192m -XX:ReservedCodeCacheSize=96m"
                + " -Dorg.apache.felix.https.enable=true -Dorg.osgi.service.http.port.secure=" + https
                + " -Dorg.apache.felix.https.keystore=" + keystore
                + " -Dorg.apache.felix.https.keystore.password=changeit"
                + " -Dorg.apache.felix.https.keystore.key.password=changeit -Dorg.apache.felix.https.keystore.type=PKCS12";
        atrium = AtriumServer.launch(
                Files.createDirectories(dir.resolve("data")),
                TestDatabase.create(),
                Map.of("ATRIUM_JAVA_OPTS", opts, "ATRIUM_PUBLIC_URL", origin));
        peer = FedifyPeer.start(cert);
    }

    @AfterAll
    void stop() throws Throwable {
        try {
            if (peer != null) {
                peer.close();
            }
        } finally {
            if (atrium != null) {
                atrium.close();
            }
            AtriumServer.deleteTree(dir.toFile());
        }
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", command));
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    private String store(User u, String slug) {
        Http.Reply s = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/stores",
                        Map.of("slug", slug, "name", "Tools of " + slug, "summary", "what we build"));
        assertEquals(201, s.status(), s.body());
        return s.get("store").get("actor_url").asText();
    }

    @Test
    void fedifyResolvesAnAtriumStoreByWebFingerAndParsesItsActor() throws Exception {
        User u = atrium.newUser();
        String slug = "interop-" + Long.toString(System.nanoTime(), 36);
        String actorUrl = store(u, slug);
        assertEquals(origin + "/ap/stores/" + slug, actorUrl, "the public URL is the HTTPS origin");
        String handle = "acct:" + slug + "@127.0.0.1:" + origin.substring(origin.lastIndexOf(':') + 1);

        JsonNode jrd = peer.control("/control/webfinger", Map.of("resource", handle));
        assertEquals(handle, jrd.get("subject").asText(), jrd.toString());
        JsonNode self = null;
        for (JsonNode link : jrd.get("links")) {
            if ("self".equals(link.path("rel").asText())) {
                self = link;
            }
        }
        assertEquals(actorUrl, self.get("href").asText(), jrd.toString());

        JsonNode actor = peer.control("/control/lookup", Map.of("id", handle));
        assertEquals(actorUrl, actor.get("id").asText(), actor.toString());
        assertEquals(slug, actor.get("preferredUsername").asText());
        assertEquals("Tools of " + slug, actor.get("name").asText());
        assertTrue(actor.get("publicKey").get("publicKeyPem").asText().contains("BEGIN PUBLIC KEY"), actor.toString());
        assertEquals(actorUrl, actor.get("publicKey").get("owner").asText());
        assertEquals(actorUrl + "/outbox", actor.get("outbox").asText());
        assertEquals(
                200,
                atrium.anonymous()
                        .get("/.well-known/webfinger?resource=" + URLEncoder.encode(handle, StandardCharsets.UTF_8))
                        .status(),
                "the same handle over plain HTTP on the server's own port");
        assertTrue(
                List.of("Group", "Service")
                        .contains(
                                actor.get("type").isArray()
                                        ? actor.get("type").get(0).asText()
                                        : actor.get("type").asText()),
                actor.toString());
    }

    /** Waits up to 30 s for an activity in the peer's inbox that {@code match} accepts. */
    private JsonNode awaitReceived(java.util.function.Predicate<JsonNode> match, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        JsonNode all = null;
        while (System.nanoTime() < deadline) {
            all = peer.control("/control/received", null);
            for (JsonNode r : all) {
                if (match.test(r)) {
                    return r;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError(what + " did not arrive; the peer received: " + all);
    }

    @Test
    void fedifyReadsTheInventoryFollowsAndReceivesASignedPushAfterARealGitPush() throws Exception {
        User u = atrium.newUser();
        String slug = "follow-" + Long.toString(System.nanoTime(), 36);
        String storeActor = store(u, slug);
        Http.Reply created = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", "chisel", "visibility", "public", "description", "cuts"));
        assertEquals(201, created.status(), created.body());
        String owner = java.net
                .URI
                .create(created.get("repository").get("clone_url").asText())
                .getPath()
                .split("/")[2];
        String repoActor = origin + "/ap/repos/" + owner + "/chisel";
        String handle = "acct:" + slug + "@127.0.0.1:" + origin.substring(origin.lastIndexOf(':') + 1);

        // Fedify resolves the store and walks its inventory with its own collection traversal
        JsonNode store = peer.control("/control/lookup", Map.of("id", handle));
        assertEquals(storeActor, store.get("id").asText());
        // inventory is no term of Fedify's vocabulary: read it from the document as Fedify's loader fetched it
        JsonNode raw = peer.control("/control/fetch", Map.of("id", storeActor));
        JsonNode inventory = peer.control(
                "/control/collection", Map.of("id", raw.get("inventory").asText()));
        assertEquals(
                List.of(repoActor), Http.JSON.convertValue(inventory.get("items"), List.class), inventory.toString());

        // alice follows the store and the repository: Atrium fetches her actor, verifies Fedify's signatures and
        // answers with Accepts that Fedify's inbox verifies before its listener sees them
        peer.control("/control/follow", Map.of("object", storeActor, "inbox", storeActor + "/inbox"));
        peer.control("/control/follow", Map.of("object", repoActor, "inbox", repoActor + "/inbox"));
        awaitReceived(
                r -> "listener".equals(r.path("via").asText())
                        && storeActor.equals(r.path("actor").asText()),
                "the store's Accept, verified by Fedify");
        awaitReceived(
                r -> "listener".equals(r.path("via").asText())
                        && repoActor.equals(r.path("actor").asText()),
                "the repository's Accept, verified by Fedify");
        JsonNode followers = atrium.anonymous()
                .get("/ap/repos/" + owner + "/chisel/followers?page=1")
                .json();
        assertTrue(followers.toString().contains(peer.alice()), "Atrium keeps alice as a follower: " + followers);

        // a real git push over HTTP: the repository's Push reaches alice, and Fedify verifies its signature and that
        // the key belongs to the repository actor
        Path home = Files.createDirectories(dir.resolve("git-home-" + System.nanoTime()));
        GitClient git = new GitClient(home, u.http().token());
        Path work = git.newWorkingCopy(dir.resolve("work-" + System.nanoTime()), "README.md", "chisel\n");
        String head = git.ok(work, "rev-parse", "HEAD").trim();
        git.ok(work, "push", "-q", atrium.base() + "/git/" + owner + "/chisel.git", "main");
        JsonNode push = awaitReceived(
                r -> "raw".equals(r.path("via").asText())
                        && "Push".equals(r.path("type").asText()),
                "the Push");
        assertTrue(push.get("verified").asBoolean(), "Fedify verified the Push's HTTP Signature: " + push);
        assertEquals(repoActor, push.get("keyOwner").asText(), push.toString());
        assertEquals(repoActor, push.get("actor").asText());
        assertEquals(
                head,
                push.get("activity")
                        .get("object")
                        .get("orderedItems")
                        .get(0)
                        .get("hash")
                        .asText(),
                push.toString());
    }
}
