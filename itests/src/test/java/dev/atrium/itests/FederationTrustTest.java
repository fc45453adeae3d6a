package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may speak for a remote actor in Model A's inboxes (issue 32, findings 1 and 5). Two other instances run in the
 * test, each a real HTTP server on loopback on its own port, so on its own origin: the victim's ({@code alice} and
 * friends) and a hostile one. The hostile instance signs correctly with its own keys (openssl) but claims the victim's
 * actors: through a key document naming them as owner, through a key on its origin that the victim even lists, and
 * through activity ids under the victim's origin. None of it is believed, and the victim's real activities still work.
 */
@SharedServer
class FederationTrustTest {

    @TempDir
    Path tmp;

    private final AtriumServer server;

    FederationTrustTest(AtriumServer server) {
        this.server = server;
    }

    /** A store of a new user; returns its actor URI. */
    private String store(String slug) {
        User u = server.newUser();
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/stores",
                        Map.of("slug", slug, "name", "Store " + slug, "summary", "s"));
        assertEquals(201, r.status(), r.body());
        return r.get("store").get("actor_url").asText();
    }

    private static String slug(String prefix) {
        return prefix + "-" + Long.toString(System.nanoTime(), 36);
    }

    private String host() {
        return server.base().replaceFirst("^https?://", "");
    }

    /** POSTs {@code activity} to the inbox {@code target}, signed by key file {@code keyName} under {@code keyId}. */
    private RawHttp.Response deliver(ApPeer signer, String keyName, String keyId, String target, String activity)
            throws Exception {
        byte[] body = activity.getBytes(StandardCharsets.UTF_8);
        return RawHttp.exchange(
                server.base(),
                "127.0.0.1",
                "POST",
                target,
                signer.signed(keyName, keyId, host(), target, ApPeer.now(), ApPeer.digest(body)),
                body);
    }

    private static String follow(String id, String actor, String object) {
        return "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"" + id
                + "\",\"type\":\"Follow\",\"actor\":\"" + actor + "\",\"object\":\"" + object + "\"}";
    }

    private static String undo(String id, String actor, String followJson) {
        return "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"" + id
                + "\",\"type\":\"Undo\",\"actor\":\"" + actor + "\",\"object\":" + followJson + "}";
    }

    private static String keyJson(String id, String owner, String pem) {
        return "{\"id\":\"" + id + "\",\"owner\":\"" + owner + "\",\"publicKeyPem\":" + TextNode.valueOf(pem) + "}";
    }

    /** A key document of its own (as Atrium's repositories and some servers publish): id, owner, PEM. */
    private static String keyDocument(String id, String owner, String pem) {
        return "{\"@context\":\"https://w3id.org/security/v1\",\"type\":\"CryptographicKey\",\"id\":\"" + id
                + "\",\"owner\":\"" + owner + "\",\"publicKeyPem\":" + TextNode.valueOf(pem) + "}";
    }

    /** An actor document at {@code path} whose {@code publicKey} is {@code keys} (an array of key objects). */
    private static String actorWithKeys(ApPeer on, String path, String... keys) {
        String actor = on.base() + path;
        return on.serve(
                path,
                "{\"@context\":[\"https://www.w3.org/ns/activitystreams\",\"https://w3id.org/security/v1\"],\"id\":\""
                        + actor + "\",\"type\":\"Person\",\"inbox\":\"" + actor + "/inbox\",\"publicKey\":["
                        + String.join(",", keys) + "]}");
    }

    /** Refused as the spec says: 401 or 403 with an {@code {"error":{"code","message"}}} body. */
    private static void assertRefused(RawHttp.Response r, String why) throws Exception {
        String text = new String(r.body(), StandardCharsets.UTF_8);
        assertTrue(
                r.status() == 401 || r.status() == 403, why + ": expected 401 or 403, got " + r.status() + " " + text);
        JsonNode error = Http.JSON.readTree(r.body()).get("error");
        assertEquals(
                r.status() == 401 ? "UNAUTHORIZED" : "FORBIDDEN",
                error.path("code").asText(),
                text);
        assertFalse(error.path("message").asText().isEmpty(), text);
    }

    private static void assertStatus(int status, RawHttp.Response r) {
        assertEquals(status, r.status(), new String(r.body(), StandardCharsets.UTF_8));
    }

    private List<String> followers(String slug) {
        JsonNode page = server.anonymous()
                .get("/ap/stores/" + slug + "/followers?page=1&limit=100")
                .json();
        List<String> out = new ArrayList<>();
        page.get("orderedItems").forEach(n -> out.add(n.asText()));
        return out;
    }

    private static List<JsonNode> deliveredTo(ApPeer peer, String path) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (ApPeer.Received r : peer.inbox) {
            if (r.path().equals(path)) {
                out.add(Http.JSON.readTree(r.body()));
            }
        }
        return out;
    }

    private static void awaitDelivery(ApPeer peer, String path, int count) throws Exception {
        long deadline = System.currentTimeMillis() + 20_000;
        while (deliveredTo(peer, path).size() < count) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("no delivery " + count + " to " + path + " within 20 s");
            }
            Thread.sleep(50);
        }
    }

    /**
     * (a) A hostile instance serves a key document with its own key that names alice as owner, and signs a Follow "from
     * alice": refused, no follower, and no Accept reaches alice's real inbox. The same key document served on alice's own
     * origin (a user there publishing a file) is refused too: alice's document does not list the key.
     */
    @Test
    void aKeyDocumentNamingAnotherActorAsOwnerCannotFollowAsThatActor() throws Exception {
        String slug = slug("trust-a");
        String storeActor = store(slug);
        String target = "/ap/stores/" + slug + "/inbox";
        try (ApPeer victim = new ApPeer(tmp);
                ApPeer hostile = new ApPeer(tmp)) {
            String alice = victim.actor("alice-a");
            String malloryPem = hostile.key("mallory-a");
            String hostileKey =
                    hostile.serve("/keys/alice", keyDocument(hostile.base() + "/keys/alice", alice, malloryPem));
            String forged = follow(victim.base() + "/activities/follow-forged", alice, storeActor);
            assertRefused(
                    deliver(hostile, "mallory-a", hostileKey, target, forged),
                    "a key document on another origin naming alice");

            String uploaded = victim.serve("/files/key", keyDocument(victim.base() + "/files/key", alice, malloryPem));
            assertRefused(
                    deliver(hostile, "mallory-a", uploaded, target, forged),
                    "a key document alice's own document does not list");

            Thread.sleep(2_000); // an Accept would be queued and delivered within this
            assertEquals(List.of(), followers(slug));
            assertEquals(
                    List.of(), deliveredTo(victim, "/users/alice-a/inbox"), "no Accept goes to alice's real inbox");

            // alice herself still follows, with her own key
            assertStatus(202, deliver(victim, "alice-a", alice + "#main-key", target, forged));
            awaitDelivery(victim, "/users/alice-a/inbox", 1);
            assertEquals(List.of(alice), followers(slug));
        }
    }

    /** (b) The forged Undo "from alice" does not remove her real subscription; her own Undo, with the same id, does. */
    @Test
    void aForgedUndoDoesNotRemoveTheVictimsRealSubscription() throws Exception {
        String slug = slug("trust-b");
        String storeActor = store(slug);
        String target = "/ap/stores/" + slug + "/inbox";
        try (ApPeer victim = new ApPeer(tmp);
                ApPeer hostile = new ApPeer(tmp)) {
            String alice = victim.actor("alice-b");
            String realFollow = follow(victim.base() + "/activities/follow-b", alice, storeActor);
            assertStatus(202, deliver(victim, "alice-b", alice + "#main-key", target, realFollow));
            awaitDelivery(victim, "/users/alice-b/inbox", 1);
            assertEquals(List.of(alice), followers(slug));

            String malloryPem = hostile.key("mallory-b");
            String hostileKey =
                    hostile.serve("/keys/alice", keyDocument(hostile.base() + "/keys/alice", alice, malloryPem));
            String uploaded = victim.serve("/files/key", keyDocument(victim.base() + "/files/key", alice, malloryPem));
            String forgedUndo = undo(victim.base() + "/activities/undo-b", alice, realFollow);
            assertRefused(
                    deliver(hostile, "mallory-b", hostileKey, target, forgedUndo),
                    "a forged Undo signed with a key on another origin");
            assertRefused(
                    deliver(hostile, "mallory-b", uploaded, target, forgedUndo),
                    "a forged Undo signed with a key alice does not list");
            assertEquals(List.of(alice), followers(slug), "alice still follows");

            assertStatus(202, deliver(victim, "alice-b", alice + "#main-key", target, forgedUndo));
            assertEquals(List.of(), followers(slug), "alice's own Undo, same id, takes effect");
        }
    }

    /**
     * (c) A key on one origin cannot speak for an actor on another, even when that actor's document lists it; a key
     * document of its own on the actor's origin, listed by the actor, is believed.
     */
    @Test
    void aKeyOnAnotherOriginThanItsOwnerIsRefusedEvenWhenTheOwnerListsIt() throws Exception {
        String slug = slug("trust-c");
        String storeActor = store(slug);
        String target = "/ap/stores/" + slug + "/inbox";
        try (ApPeer victim = new ApPeer(tmp);
                ApPeer hostile = new ApPeer(tmp)) {
            String carol = victim.base() + "/users/carol-c";
            String mainPem = victim.key("carol-c");
            String ownPem = victim.key("carol-c-own");
            String crossPem = hostile.key("carol-c-cross");
            String crossKey =
                    hostile.serve("/keys/carol", keyDocument(hostile.base() + "/keys/carol", carol, crossPem));
            String ownKey = victim.serve("/keys/carol", keyDocument(victim.base() + "/keys/carol", carol, ownPem));
            actorWithKeys(
                    victim,
                    "/users/carol-c",
                    keyJson(carol + "#main-key", carol, mainPem),
                    keyJson(crossKey, carol, crossPem),
                    keyJson(ownKey, carol, ownPem));

            String activity = follow(victim.base() + "/activities/follow-c", carol, storeActor);
            assertRefused(
                    deliver(hostile, "carol-c-cross", crossKey, target, activity),
                    "a key on another origin than its owner");
            assertEquals(List.of(), followers(slug));

            assertStatus(202, deliver(victim, "carol-c-own", ownKey, target, activity));
            awaitDelivery(victim, "/users/carol-c/inbox", 1);
            assertEquals(List.of(carol), followers(slug));
        }
    }

    /**
     * (d) A signed actor cannot send an activity under an id of another origin (or undo a Follow whose id is on another
     * origin): refused with the spec's body, nothing recorded, and alice's later real Undo with that id still works. An
     * actor on alice's own origin that takes her next id first does not shadow it either: replay records are per sender.
     */
    @Test
    void anActivityIdUnderAnotherOriginIsRefusedAndNoSenderShadowsAnothersIds() throws Exception {
        String slug = slug("trust-d");
        String storeActor = store(slug);
        String target = "/ap/stores/" + slug + "/inbox";
        try (ApPeer victim = new ApPeer(tmp);
                ApPeer hostile = new ApPeer(tmp)) {
            String alice = victim.actor("alice-d");
            String aliceFollow = follow(victim.base() + "/activities/follow-d", alice, storeActor);
            assertStatus(202, deliver(victim, "alice-d", alice + "#main-key", target, aliceFollow));
            awaitDelivery(victim, "/users/alice-d/inbox", 1);

            String mallory = hostile.actor("mallory-d");
            String malloryFollow = follow(hostile.base() + "/activities/follow-m", mallory, storeActor);
            String squat1 = victim.base() + "/activities/undo-d1";
            RawHttp.Response r =
                    deliver(hostile, "mallory-d", mallory + "#main-key", target, undo(squat1, mallory, malloryFollow));
            assertStatus(403, r);
            assertEquals(
                    "FORBIDDEN",
                    Http.JSON.readTree(r.body()).get("error").get("code").asText());
            assertTrue(
                    Http.JSON
                            .readTree(r.body())
                            .get("error")
                            .get("message")
                            .asText()
                            .contains("origin"),
                    new String(r.body()));
            assertRefused(
                    deliver(
                            hostile,
                            "mallory-d",
                            mallory + "#main-key",
                            target,
                            follow(victim.base() + "/activities/follow-squat", mallory, storeActor)),
                    "a Follow under another origin's id");
            // an Undo with its own id whose embedded Follow claims an id on alice's origin
            String claimed = "{\"id\":\"" + victim.base() + "/activities/follow-d\",\"type\":\"Follow\",\"actor\":\""
                    + mallory + "\",\"object\":\"" + storeActor + "\"}";
            assertRefused(
                    deliver(
                            hostile,
                            "mallory-d",
                            mallory + "#main-key",
                            target,
                            undo(hostile.base() + "/activities/undo-m", mallory, claimed)),
                    "an Undo of a Follow whose id is on another origin");
            assertEquals(List.of(alice), followers(slug));

            // an actor on alice's own origin sends her next id first: its own record, not hers
            String neighbour = victim.actor("neighbour-d");
            String squat2 = victim.base() + "/activities/undo-d2";
            assertStatus(
                    202,
                    deliver(
                            victim,
                            "neighbour-d",
                            neighbour + "#main-key",
                            target,
                            undo(
                                    squat2,
                                    neighbour,
                                    follow(victim.base() + "/activities/follow-n", neighbour, storeActor))));
            assertEquals(List.of(alice), followers(slug));

            // alice's real Undo under the id mallory tried first: taken (202), not a replay
            assertStatus(
                    202, deliver(victim, "alice-d", alice + "#main-key", target, undo(squat1, alice, aliceFollow)));
            assertEquals(List.of(), followers(slug), "alice's Undo took effect");
            // she follows again and undoes under the id her neighbour sent first: taken too
            assertStatus(
                    202,
                    deliver(
                            victim,
                            "alice-d",
                            alice + "#main-key",
                            target,
                            follow(victim.base() + "/activities/follow-d2", alice, storeActor)));
            assertEquals(List.of(alice), followers(slug));
            assertStatus(
                    202, deliver(victim, "alice-d", alice + "#main-key", target, undo(squat2, alice, aliceFollow)));
            assertEquals(List.of(), followers(slug));
            // and her own replay is still a replay: 200, nothing happens
            assertStatus(
                    200, deliver(victim, "alice-d", alice + "#main-key", target, undo(squat2, alice, aliceFollow)));
        }
    }
}
