package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Federation Model A (store-inventory, the default model) over HTTP on the real runtime: WebFinger, Store and canonical
 * Repository actors, the hybrid inventory, outboxes fed by real pushes and API calls, redirects, and the signed inboxes
 * with every rule answered by its exact status, a Follow answered by an Accept delivered signed to another instance
 * (a JDK HTTP server in the test, signing and verifying with openssl).
 */
@SharedServer
class StoreInventoryTest {

    @TempDir
    Path tmp;

    private static String host(AtriumServer server) {
        return server.base().replaceFirst("^https?://", "");
    }

    private static String type(Http.Reply r) {
        return r.raw()
                .headers()
                .firstValue("Content-Type")
                .orElse("")
                .replace(" ", "")
                .toLowerCase(java.util.Locale.ROOT);
    }

    private static String location(Http.Reply r) {
        return r.raw().headers().firstValue("Location").orElse(null);
    }

    private static String store(User u, String slug) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/stores",
                        Map.of("slug", slug, "name", "Tools of " + slug, "summary", "what we build"));
        assertEquals(201, r.status(), r.body());
        return r.get("store").get("actor_url").asText();
    }

    private static String repo(User u, String name, String visibility, String description) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility, "description", description));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    private static String owner(User u) {
        return u.http()
                .get("/api/spaces/" + u.defaultSpaceId())
                .json()
                .path("space")
                .path("slug")
                .asText();
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.isTextual() ? n.asText() : n.toString()));
        return out;
    }

    /** The first page (newest first) of an outbox, polled until {@code until} holds (events are handled asynchronously). */
    private static JsonNode awaitOutbox(Http http, String outbox, Predicate<JsonNode> until)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        JsonNode items = null;
        while (System.currentTimeMillis() < deadline) {
            Http.Reply r = http.get(outbox + "?page=1&limit=100");
            assertEquals(200, r.status(), r.body());
            items = r.get("orderedItems");
            for (JsonNode a : items) {
                if (until.test(a)) {
                    return items;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the outbox " + outbox + " did not get the activity: " + items);
    }

    @Test
    void storesAndRepositoriesAreActorsAndPushesReachTheOutbox() throws Exception {
        User u = server.newUser();
        String slug = "inv-" + Long.toString(System.nanoTime(), 36);
        String storeActor = store(u, slug);
        String owner = owner(u);
        String hammerId = repo(u, "hammer", "public", "hits nails");
        repo(u, "secret-plans", "private", "nobody sees these");
        Http anyone = server.anonymous();
        String base = server.base();
        String hammer = base + "/ap/repos/" + owner + "/hammer";

        // WebFinger: the store by acct: and by its actor URL, a repository by its actor URL; private ones are not there
        Http.Reply finger = anyone.get("/.well-known/webfinger?resource="
                + URLEncoder.encode("acct:" + slug + "@" + host(server), StandardCharsets.UTF_8));
        assertEquals(200, finger.status(), finger.body());
        assertEquals("application/jrd+json;charset=utf-8", type(finger));
        assertEquals(storeActor, finger.get("links").get(0).get("href").asText());
        assertEquals(
                "application/activity+json",
                finger.get("links").get(0).get("type").asText());
        assertEquals(
                storeActor,
                anyone.get("/.well-known/webfinger?resource=" + URLEncoder.encode(storeActor, StandardCharsets.UTF_8))
                        .get("links")
                        .get(0)
                        .get("href")
                        .asText());
        Http.Reply repoFinger =
                anyone.get("/.well-known/webfinger?resource=" + URLEncoder.encode(hammer, StandardCharsets.UTF_8));
        assertEquals(200, repoFinger.status(), repoFinger.body());
        assertEquals(hammer, repoFinger.get("subject").asText());
        assertEquals(hammer, repoFinger.get("links").get(0).get("href").asText());
        BadInputTest.assertSpecError(
                anyone.get("/.well-known/webfinger?resource="
                        + URLEncoder.encode(base + "/ap/repos/" + owner + "/secret-plans", StandardCharsets.UTF_8)),
                404,
                "NOT_FOUND");
        BadInputTest.assertSpecError(
                anyone.get("/.well-known/webfinger?resource=acct:" + slug + "@elsewhere.example"), 404, "NOT_FOUND");
        BadInputTest.assertSpecError(anyone.get("/.well-known/webfinger"), 400, "BAD_REQUEST");

        // the store actor
        Http.Reply actor = anyone.get("/ap/stores/" + slug);
        assertEquals(200, actor.status(), actor.body());
        assertEquals("application/activity+json;charset=utf-8", type(actor));
        JsonNode s = actor.json();
        assertEquals(List.of("Service", "Store"), texts(s.get("type")));
        assertEquals(storeActor, s.get("id").asText());
        assertEquals(slug, s.get("preferredUsername").asText());
        for (String field : List.of("inbox", "outbox", "followers", "inventory", "search")) {
            assertEquals(storeActor + "/" + field, s.get(field).asText(), field);
        }
        assertEquals(
                storeActor + "/search/repositories", s.get("repositorySearch").asText());
        assertEquals(storeActor + "#main-key", s.get("publicKey").get("id").asText());
        assertEquals(storeActor, s.get("publicKey").get("owner").asText());

        // automatic inventory: the workspace's public repositories only
        JsonNode inventory = anyone.get("/ap/stores/" + slug + "/inventory").json();
        assertEquals("OrderedCollection", inventory.get("type").asText());
        assertEquals(List.of(hammer), texts(inventory.get("orderedItems")));
        assertEquals(1, inventory.get("totalItems").asInt());
        Http.Reply redirect = anyone.get("/ap/stores/" + slug + "/repositories");
        assertEquals(301, redirect.status());
        assertEquals(storeActor + "/inventory", location(redirect));
        redirect = anyone.get("/ap/stores/" + slug + "/repositories/" + owner + "/hammer");
        assertEquals(301, redirect.status());
        assertEquals(hammer, location(redirect));
        redirect = anyone.get("/ns/ext-git");
        assertEquals(301, redirect.status());
        assertEquals(base + "/ns/ext", location(redirect));
        Http.Reply ns = anyone.get("/ns/ext");
        assertEquals(200, ns.status());
        assertEquals("application/ld+json;charset=utf-8", type(ns));
        assertEquals(base + "/ns/ext#", ns.get("@context").get("ext").asText());

        // search
        assertEquals(
                "ext:SearchService",
                anyone.get("/ap/stores/" + slug + "/search")
                        .json()
                        .get("type")
                        .get(1)
                        .asText());
        assertEquals(
                List.of(hammer),
                texts(anyone.get("/ap/stores/" + slug + "/search/repositories?q=NAILS")
                        .json()
                        .get("orderedItems")));
        assertEquals(
                0,
                anyone.get("/ap/stores/" + slug + "/search/repositories?q=plans")
                        .json()
                        .get("totalItems")
                        .asInt());
        BadInputTest.assertSpecError(anyone.get("/ap/stores/" + slug + "/search/repositories"), 400, "BAD_REQUEST");

        // a real push: Push (with its commit) and the tag's Create in the repository's outbox, Announces in the store's
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("w"), "README.md", "hammer\n");
        git.ok(work, "tag", "v1");
        String head = git.ok(work, "rev-parse", "HEAD").trim();
        git.ok(work, "push", "-q", base + "/git/" + owner + "/hammer.git", "main", "v1");
        String outbox = "/ap/repos/" + owner + "/hammer/outbox";
        JsonNode items = awaitOutbox(
                anyone,
                outbox,
                a -> a.get("type").asText().equals("Create")
                        && a.get("object").path("type").asText().equals("Tag"));
        JsonNode push = null;
        for (JsonNode a : items) {
            if (a.get("type").asText().equals("Push")) {
                push = a;
            }
        }
        assertNotNull(push, items.toString());
        assertEquals(hammer, push.get("actor").asText());
        assertEquals(hammer, push.get("attributedTo").asText());
        assertEquals("refs/heads/main", push.get("target").asText());
        assertEquals(
                "https://www.w3.org/ns/activitystreams#Public",
                push.get("to").get(0).asText());
        JsonNode commit = push.get("object").get("orderedItems").get(0);
        assertEquals("Commit", commit.get("type").asText());
        assertEquals(head, commit.get("hash").asText());
        assertEquals("initial", commit.get("message").asText().trim());
        assertTrue(commit.get("attributedTo").has("email") && commit.has("committed"), commit.toString());
        assertEquals(
                texts(items).stream()
                        .filter(t -> t.contains("\"type\":\"Create\"") && t.contains("\"type\":\"Repository\""))
                        .count(),
                1,
                "the repository's Create: " + items);
        JsonNode summary = anyone.get(outbox).json();
        assertEquals("OrderedCollection", summary.get("type").asText());
        assertTrue(summary.get("totalItems").asInt() >= 4, summary.toString());
        JsonNode storeOutbox = awaitOutbox(
                anyone,
                "/ap/stores/" + slug + "/outbox",
                a -> a.get("type").asText().equals("Announce")
                        && a.get("object").asText().equals(push_id(items)));
        assertTrue(
                texts(storeOutbox).stream().anyMatch(t -> t.contains("\"type\":\"Create\"") && t.contains(hammer)),
                storeOutbox.toString());
        // what an Announce names can be fetched
        Http.Reply announced = anyone.get(push_id(items).substring(base.length()));
        assertEquals(200, announced.status(), announced.body());
        assertEquals("Push", announced.get("type").asText());
        BadInputTest.assertSpecError(
                anyone.get("/ap/repos/" + owner + "/hammer/activities/act_nothing"), 404, "NOT_FOUND");

        // the canonical Repository actor, every field of the spec's table
        JsonNode r = anyone.get("/ap/repos/" + owner + "/hammer").json();
        assertEquals(hammer, r.get("id").asText());
        assertEquals("Repository", r.get("type").asText());
        assertEquals("hammer", r.get("name").asText());
        assertEquals("hits nails", r.get("summary").asText());
        for (String field : List.of("inbox", "outbox", "followers", "stores")) {
            assertEquals(hammer + "/" + field, r.get(field).asText(), field);
        }
        assertEquals(List.of(base + "/git/" + owner + "/hammer.git"), texts(r.get("cloneUri")));
        assertEquals(List.of(base + "/git/" + owner + "/hammer.git"), texts(r.get("pushUri")));
        assertEquals(base + "/@" + owner + "/hammer", r.get("url").asText());
        assertEquals("refs/heads/main", r.get("defaultBranchRef").asText());
        assertEquals(head, r.get("defaultBranchHash").asText());
        assertTrue(r.has("published") && r.has("updated"), r.toString());
        assertEquals(hammer + "/main-key", r.get("publicKey").get("id").asText());
        JsonNode keyDoc = anyone.get("/ap/repos/" + owner + "/hammer/main-key").json();
        assertEquals("CryptographicKey", keyDoc.get("type").asText());
        assertEquals(hammer, keyDoc.get("owner").asText());
        assertEquals(
                r.get("publicKey").get("publicKeyPem").asText(),
                keyDoc.get("publicKeyPem").asText());
        assertEquals(
                List.of(storeActor),
                texts(anyone.get("/ap/repos/" + owner + "/hammer/stores").json().get("orderedItems")));
        Http.Reply byUsername = anyone.get("/ap/repos/" + u.username() + "/hammer");
        if (!u.username().equals(owner)) {
            assertEquals(
                    301,
                    byUsername.status(),
                    "a username stands for its default workspace: redirected to the canonical actor");
            assertEquals(hammer, location(byUsername));
        } else {
            assertEquals(200, byUsername.status());
        }

        // a private repository is no actor, anywhere
        for (String path : List.of("", "/outbox", "/followers", "/stores")) {
            BadInputTest.assertSpecError(anyone.get("/ap/repos/" + owner + "/secret-plans" + path), 404, "NOT_FOUND");
        }
        assertFalse(anyone.get("/ap/stores/" + slug + "/outbox?page=1&limit=100")
                .body()
                .contains("secret-plans"));
        BadInputTest.assertSpecError(anyone.get("/ap/stores/no-such-store-here"), 404, "NOT_FOUND");

        // explicit mode: one registration and only it is listed; the edits are Add and Remove
        String explicit = "/api/spaces/" + u.defaultSpaceId() + "/stores/" + slug + "/inventory";
        String anvilId = repo(u, "anvil", "public", "anvils");
        String anvil = base + "/ap/repos/" + owner + "/anvil";
        Http.Reply added = u.http().post(explicit, Map.of("repository_uri", anvil));
        assertEquals(201, added.status(), added.body());
        assertEquals(
                List.of(anvil),
                texts(anyone.get("/ap/stores/" + slug + "/inventory").json().get("orderedItems")));
        JsonNode afterAdd =
                anyone.get("/ap/stores/" + slug + "/outbox?page=1").json().get("orderedItems");
        assertEquals("Add", afterAdd.get(0).get("type").asText(), afterAdd.toString());
        assertEquals(anvil, afterAdd.get(0).get("object").asText());
        assertEquals(storeActor + "/inventory", afterAdd.get(0).get("target").asText());
        assertEquals(
                List.of(),
                texts(anyone.get("/ap/repos/" + owner + "/hammer/stores").json().get("orderedItems")),
                "an explicit store no longer lists what it does not name");
        assertEquals(
                200,
                u.http()
                        .delete(explicit + "?repository_uri=" + URLEncoder.encode(anvil, StandardCharsets.UTF_8))
                        .status());
        assertEquals(
                "Remove",
                anyone.get("/ap/stores/" + slug + "/outbox?page=1")
                        .json()
                        .get("orderedItems")
                        .get(0)
                        .get("type")
                        .asText());
        assertEquals(
                2,
                anyone.get("/ap/stores/" + slug + "/inventory")
                        .json()
                        .get("totalItems")
                        .asInt(),
                "automatic again");

        // made private: the actor is gone and its outbox says Delete to whoever kept it
        int before = anyone.get("/ap/stores/" + slug + "/outbox")
                .json()
                .get("totalItems")
                .asInt();
        assertEquals(
                200,
                u.http()
                        .patch("/api/repos/" + hammerId, Map.of("visibility", "private"))
                        .status());
        long deadline = System.currentTimeMillis() + 20_000;
        while (anyone.get("/ap/stores/" + slug + "/outbox")
                                .json()
                                .get("totalItems")
                                .asInt()
                        == before
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        JsonNode gone = anyone.get("/ap/stores/" + slug + "/outbox?page=1")
                .json()
                .get("orderedItems")
                .get(0);
        assertEquals("Announce", gone.get("type").asText(), gone.toString());
        assertTrue(gone.get("object").asText().startsWith(hammer + "/activities/"), gone.toString());
        BadInputTest.assertSpecError(anyone.get("/ap/repos/" + owner + "/hammer"), 404, "NOT_FOUND");
        assertEquals(
                List.of(anvil),
                texts(anyone.get("/ap/stores/" + slug + "/inventory").json().get("orderedItems")));
        // listed explicitly, then made private: not shown either
        assertEquals(
                201, u.http().post(explicit, Map.of("repository_uri", anvil)).status());
        assertEquals(
                List.of(anvil),
                texts(anyone.get("/ap/stores/" + slug + "/inventory").json().get("orderedItems")));
        assertEquals(
                200,
                u.http()
                        .patch("/api/repos/" + anvilId, Map.of("visibility", "private"))
                        .status());
        assertEquals(
                List.of(),
                texts(anyone.get("/ap/stores/" + slug + "/inventory").json().get("orderedItems")));
    }

    private AtriumServer server;

    StoreInventoryTest(AtriumServer server) {
        this.server = server;
    }

    private static String push_id(JsonNode items) {
        for (JsonNode a : items) {
            if (a.get("type").asText().equals("Push")) {
                return a.get("id").asText();
            }
        }
        throw new AssertionError("no Push in " + items);
    }

    /** POSTs {@code body} to {@code target} with exactly {@code headers} over a raw connection. */
    private RawHttp.Response post(String target, Map<String, String> headers, byte[] body) throws Exception {
        return RawHttp.exchange(server.base(), "127.0.0.1", "POST", target, headers, body);
    }

    private static void assertError(RawHttp.Response r, int status, String code) throws Exception {
        assertEquals(status, r.status(), new String(r.body(), StandardCharsets.UTF_8));
        JsonNode error = Http.JSON.readTree(r.body()).get("error");
        assertEquals(code, error.get("code").asText(), error.toString());
    }

    @Test
    void inboxesVerifyEverySignatureRuleAndAFollowIsAcceptedBySignedDelivery() throws Exception {
        User u = server.newUser();
        String slug = "fol-" + Long.toString(System.nanoTime(), 36);
        String storeActor = store(u, slug);
        String owner = owner(u);
        repo(u, "chisel", "public", "cuts");
        String chisel = server.base() + "/ap/repos/" + owner + "/chisel";
        String target = "/ap/stores/" + slug + "/inbox";
        String host = host(server);
        try (ApPeer peer = new ApPeer(tmp)) {
            String ann = peer.actor("ann");
            String bob = peer.actor("bob");
            String followId = peer.base() + "/activities/follow-1";
            byte[] follow = ("{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"" + followId
                            + "\",\"type\":\"Follow\",\"actor\":\"" + ann + "\",\"object\":\"" + storeActor + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            String digest = ApPeer.digest(follow);

            // Date missing: 400
            Map<String, String> h = new java.util.LinkedHashMap<>(
                    peer.signed("ann", ann + "#main-key", host, target, ApPeer.now(), digest));
            h.remove("Date");
            assertError(post(target, h, follow), 400, "BAD_REQUEST");
            // more than five minutes off: 401
            String old =
                    ApPeer.HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC).minusMinutes(6));
            assertError(
                    post(target, peer.signed("ann", ann + "#main-key", host, target, old, digest), follow),
                    401,
                    "UNAUTHORIZED");
            // a signature by another key than the one named: 401
            assertError(
                    post(target, peer.signed("bob", ann + "#main-key", host, target, ApPeer.now(), digest), follow),
                    401,
                    "UNAUTHORIZED");
            // no signature at all: 401
            h = new java.util.LinkedHashMap<>(
                    peer.signed("ann", ann + "#main-key", host, target, ApPeer.now(), digest));
            h.remove("Signature");
            assertError(post(target, h, follow), 401, "UNAUTHORIZED");
            // a Digest that is not the body's: 400
            byte[] other = "{\"type\":\"Follow\"}".getBytes(StandardCharsets.UTF_8);
            assertError(
                    post(
                            target,
                            peer.signed("ann", ann + "#main-key", host, target, ApPeer.now(), ApPeer.digest(other)),
                            follow),
                    400,
                    "BAD_REQUEST");
            // signed by bob, correctly, for an activity whose actor is ann: 403
            assertError(
                    post(target, peer.signed("bob", bob + "#main-key", host, target, ApPeer.now(), digest), follow),
                    403,
                    "FORBIDDEN");
            assertEquals(
                    0,
                    server.anonymous()
                            .get("/ap/stores/" + slug + "/followers")
                            .json()
                            .get("totalItems")
                            .asInt());
            assertEquals(0, peer.inbox.size());

            // the Follow: 202, an Accept kept in the outbox and delivered to ann's inbox, signed by the store's key
            RawHttp.Response accepted =
                    post(target, peer.signed("ann", ann + "#main-key", host, target, ApPeer.now(), digest), follow);
            assertEquals(202, accepted.status(), new String(accepted.body(), StandardCharsets.UTF_8));
            ApPeer.Received delivered = awaitDelivery(peer, "/users/ann/inbox", 1);
            JsonNode accept = Http.JSON.readTree(delivered.body());
            assertEquals("Accept", accept.get("type").asText());
            assertEquals(storeActor, accept.get("actor").asText());
            assertEquals(followId, accept.get("object").get("id").asText());
            assertTrue(
                    delivered.header("Signature").contains("keyId=\"" + storeActor + "#main-key\""),
                    delivered.header("Signature"));
            String storeKey = server.anonymous()
                    .get("/ap/stores/" + slug)
                    .json()
                    .get("publicKey")
                    .get("publicKeyPem")
                    .asText();
            assertTrue(peer.verifies(delivered, storeKey), "openssl verifies the Accept's signature");
            JsonNode followers = server.anonymous()
                    .get("/ap/stores/" + slug + "/followers?page=1")
                    .json();
            assertEquals(List.of(ann), texts(followers.get("orderedItems")));
            assertEquals(
                    "Accept",
                    server.anonymous()
                            .get("/ap/stores/" + slug + "/outbox?page=1")
                            .json()
                            .get("orderedItems")
                            .get(0)
                            .get("type")
                            .asText());

            // the same activity again, freshly signed: 200, and nothing happens a second time
            RawHttp.Response replay =
                    post(target, peer.signed("ann", ann + "#main-key", host, target, ApPeer.now(), digest), follow);
            assertEquals(200, replay.status(), new String(replay.body(), StandardCharsets.UTF_8));
            Thread.sleep(2_500);
            assertEquals(1, peer.inbox.size(), "no second Accept");
            assertEquals(
                    1,
                    server.anonymous()
                            .get("/ap/stores/" + slug + "/followers")
                            .json()
                            .get("totalItems")
                            .asInt());

            // ann follows the repository too; a real push reaches her as a signed Push activity
            String repoTarget = "/ap/repos/" + owner + "/chisel/inbox";
            byte[] followRepo = ("{\"id\":\"" + peer.base() + "/activities/follow-2\",\"type\":\"Follow\",\"actor\":\""
                            + ann + "\",\"object\":\"" + chisel + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            assertEquals(
                    202,
                    post(
                                    repoTarget,
                                    peer.signed(
                                            "ann",
                                            ann + "#main-key",
                                            host,
                                            repoTarget,
                                            ApPeer.now(),
                                            ApPeer.digest(followRepo)),
                                    followRepo)
                            .status());
            awaitDelivery(peer, "/users/ann/inbox", 2);
            GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
            Path work = git.newWorkingCopy(tmp.resolve("w"), "a.txt", "a\n");
            String head = git.ok(work, "rev-parse", "HEAD").trim();
            git.ok(work, "push", "-q", server.base() + "/git/" + owner + "/chisel.git", "main");
            ApPeer.Received pushed = null;
            long deadline = System.currentTimeMillis() + 20_000;
            while (pushed == null && System.currentTimeMillis() < deadline) {
                for (ApPeer.Received r : peer.inbox) {
                    if (Http.JSON.readTree(r.body()).path("type").asText().equals("Push")) {
                        pushed = r;
                    }
                }
                Thread.sleep(100);
            }
            assertNotNull(pushed, "the Push reached the follower");
            JsonNode push = Http.JSON.readTree(pushed.body());
            assertEquals(chisel, push.get("actor").asText());
            assertEquals(
                    head,
                    push.get("object").get("orderedItems").get(0).get("hash").asText());
            String repoKey = server.anonymous()
                    .get("/ap/repos/" + owner + "/chisel")
                    .json()
                    .get("publicKey")
                    .get("publicKeyPem")
                    .asText();
            assertTrue(peer.verifies(pushed, repoKey), "openssl verifies the Push's signature");

            // Undo of the store Follow: 202, no longer a follower; the follow of the repository stays
            byte[] undo = ("{\"id\":\"" + peer.base() + "/activities/undo-1\",\"type\":\"Undo\",\"actor\":\"" + ann
                            + "\",\"object\":" + new String(follow, StandardCharsets.UTF_8) + "}")
                    .getBytes(StandardCharsets.UTF_8);
            assertEquals(
                    202,
                    post(
                                    target,
                                    peer.signed(
                                            "ann", ann + "#main-key", host, target, ApPeer.now(), ApPeer.digest(undo)),
                                    undo)
                            .status());
            assertEquals(
                    0,
                    server.anonymous()
                            .get("/ap/stores/" + slug + "/followers")
                            .json()
                            .get("totalItems")
                            .asInt());
            assertEquals(
                    1,
                    server.anonymous()
                            .get("/ap/repos/" + owner + "/chisel/followers")
                            .json()
                            .get("totalItems")
                            .asInt());

            // an activity type the inbox does not take, correctly signed: 400
            byte[] like = ("{\"id\":\"" + peer.base() + "/activities/like-1\",\"type\":\"Like\",\"actor\":\"" + ann
                            + "\",\"object\":\"" + storeActor + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            assertError(
                    post(
                            target,
                            peer.signed("ann", ann + "#main-key", host, target, ApPeer.now(), ApPeer.digest(like)),
                            like),
                    400,
                    "BAD_REQUEST");

            // a repository of the other instance joins the store's explicit inventory (its actor fetched through the
            // guard)
            String saw = peer.base() + "/repos/saw";
            peer.serve(
                    "/repos/saw",
                    "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"" + saw
                            + "\",\"type\":\"Repository\"," + "\"name\":\"saw\",\"cloneUri\":[\"" + peer.base()
                            + "/git/saw.git\"],\"defaultBranchRef\":\"refs/heads/main\"}");
            String explicit = "/api/spaces/" + u.defaultSpaceId() + "/stores/" + slug + "/inventory";
            Http.Reply added = u.http().post(explicit, Map.of("repository_uri", saw));
            assertEquals(201, added.status(), added.body());
            assertEquals(
                    peer.base() + "/git/saw.git",
                    added.get("item").get("clone_uri").asText());
            assertEquals(
                    List.of(saw),
                    texts(server.anonymous()
                            .get("/ap/stores/" + slug + "/inventory")
                            .json()
                            .get("orderedItems")));
            assertEquals(
                    List.of(saw),
                    texts(server.anonymous()
                            .get("/ap/stores/" + slug + "/search/repositories?q=sa")
                            .json()
                            .get("orderedItems")));
            JsonNode add = server.anonymous()
                    .get("/ap/stores/" + slug + "/outbox?page=1")
                    .json()
                    .get("orderedItems")
                    .get(0);
            assertEquals("Add", add.get("type").asText());
            assertEquals(saw, add.get("object").asText());
        }
    }

    private static ApPeer.Received awaitDelivery(ApPeer peer, String path, int count) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            List<ApPeer.Received> got =
                    peer.inbox.stream().filter(r -> r.path().equals(path)).toList();
            if (got.size() >= count) {
                return got.get(count - 1);
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no delivery " + count + " to " + path + " within 20 s");
    }

    @Test
    void theTwoModelsNeverRunTogetherAndSwitchAtRunTime() throws Exception {
        User u = server.newUser();
        String slug = "sw-" + Long.toString(System.nanoTime(), 36);
        store(u, slug);
        Http op = server.operator();
        assertTrue(FeatureSwitchTest.feature(server, "store-inventory")
                .get("enabled")
                .asBoolean());
        assertFalse(
                FeatureSwitchTest.feature(server, "store-pullonly")
                        .get("enabled")
                        .asBoolean(),
                "Model B is off by default");
        assertEquals(
                List.of("store-pullonly"),
                texts(FeatureSwitchTest.feature(server, "store-inventory").get("conflicts")));

        Http.Reply refused = op.post("/admin/features/store-pullonly/enable", Map.of());
        BadInputTest.assertSpecError(refused, 409, "CONFLICT");
        assertTrue(refused.json().get("error").get("message").asText().contains("store-inventory"), refused.body());
        assertFalse(FeatureSwitchTest.feature(server, "store-pullonly")
                .get("enabled")
                .asBoolean());
        String inbox = "/ap/stores/" + slug + "/inbox";
        try {
            assertEquals(
                    200,
                    op.post("/admin/features/store-inventory/disable", Map.of()).status());
            assertEquals(
                    200,
                    op.post("/admin/features/store-pullonly/enable", Map.of()).status());
            Http.Reply repositories =
                    FeatureSwitchTest.await(server.anonymous(), "/ap/stores/" + slug + "/repositories", 200);
            assertEquals("OrderedCollection", repositories.get("type").asText(), repositories.body());
            assertEquals(
                    501,
                    server.anonymous()
                            .send("POST", inbox, "{}".getBytes(StandardCharsets.UTF_8), "application/activity+json")
                            .status());
            refused = op.post("/admin/features/store-inventory/enable", Map.of());
            BadInputTest.assertSpecError(refused, 409, "CONFLICT");
            assertTrue(refused.json().get("error").get("message").asText().contains("store-pullonly"), refused.body());
        } finally {
            assertEquals(
                    200,
                    op.post("/admin/features/store-pullonly/disable", Map.of()).status());
            assertEquals(
                    200,
                    op.post("/admin/features/store-inventory/enable", Map.of()).status());
        }
        assertEquals(
                301,
                FeatureSwitchTest.await(server.anonymous(), "/ap/stores/" + slug + "/repositories", 301)
                        .status());
        assertEquals(
                400,
                server.anonymous()
                        .send("POST", inbox, "{}".getBytes(StandardCharsets.UTF_8), "application/activity+json")
                        .status(),
                "Model A's inbox wants a signed activity");
    }

    /**
     * Public federation GETs are limited per client address (429 RATE_LIMITED with Retry-After); the operator sets the
     * rate with a configuration file, and removing it brings the default back.
     */
    @Test
    void publicGetsAreRateLimitedPerClientAddress() throws Exception {
        Path file = server.data.resolve("deploy/dev.atrium.store.ap.ratelimit.config");
        java.nio.file.Files.writeString(file, "perMinute=I\"2\"\nburst=I\"3\"\n", StandardCharsets.UTF_8);
        try {
            RawHttp.Response limited = null;
            long deadline = System.currentTimeMillis() + 20_000;
            while (limited == null && System.currentTimeMillis() < deadline) {
                RawHttp.Response r = RawHttp.exchange(server.base(), "127.0.0.9", "GET", "/ns/ext", Map.of(), null);
                if (r.status() == 429) {
                    limited = r;
                } else {
                    assertEquals(200, r.status());
                    Thread.sleep(100);
                }
            }
            assertNotNull(limited, "the limit applies once the configuration is read");
            JsonNode error = Http.JSON.readTree(limited.body()).get("error");
            assertEquals("RATE_LIMITED", error.get("code").asText());
            long retry = Long.parseLong(limited.header("retry-after"));
            assertTrue(retry >= 1 && retry <= 30, "two a minute: at most 30 s, got " + retry);
            assertEquals(
                    429,
                    RawHttp.exchange(
                                    server.base(),
                                    "127.0.0.9",
                                    "GET",
                                    "/.well-known/webfinger?resource=acct:x@y",
                                    Map.of(),
                                    null)
                            .status());
            assertEquals(
                    200,
                    RawHttp.exchange(server.base(), "127.0.0.10", "GET", "/ns/ext", Map.of(), null)
                            .status(),
                    "another address has its own allowance");
            assertEquals(
                    401,
                    RawHttp.exchange(server.base(), "127.0.0.9", "GET", "/api/spaces/me", Map.of(), null)
                            .status(),
                    "only the public federation documents are counted");
        } finally {
            java.nio.file.Files.delete(file);
        }
        long deadline = System.currentTimeMillis() + 20_000;
        int status = 0;
        while (status != 200 && System.currentTimeMillis() < deadline) {
            status = RawHttp.exchange(server.base(), "127.0.0.9", "GET", "/ns/ext", Map.of(), null)
                    .status();
            Thread.sleep(100);
        }
        assertEquals(200, status, "the default limit is back");
    }
}
