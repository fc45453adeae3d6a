package dev.atrium.store.ap.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.store.ap.api.HttpSignatures.SignatureRefused;
import dev.atrium.store.ap.api.HttpSignatures.Signer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Signatures against an independent signer: every signed request here is made by the test with the {@code openssl}
 * command (key, signing string, signature), and Atrium's own signatures are checked by {@code openssl} in turn. The
 * signer's actor document is served by a real HTTP server on loopback, fetched through the kernel's egress guard.
 */
class SignaturesTest {

    @TempDir
    static Path dir;

    private static TestPostgres database;
    private static Peer peer;
    private static String actor;
    private static GuardedFetcher fetcher;
    private static Signatures signatures;

    @BeforeAll
    static void start() throws Exception {
        database = TestPostgres.create("atrium_ap_sig");
        peer = new Peer(dir);
        actor = peer.serveActor("/users/alice", peer.opensslKey("alice"));
        ActorKeyStore keys = new ActorKeyStore(
                database.dataSource(),
                database.migrations(ActorKeyStore.class, "/db/migration/V1__federation_core.sql"),
                TestPostgres.noBundleContext());
        fetcher = new GuardedFetcher(Peer.guard(true), keys, Peer.fetchTimeout(5));
        signatures = new Signatures(keys, fetcher);
    }

    @AfterAll
    static void stop() throws Exception {
        fetcher.stop();
        peer.close();
        database.close();
    }

    /** A request as openssl signs it: (request-target) host date [digest], rsa-sha256. */
    private static Map<String, List<String>> signed(
            String key, String keyId, String method, String path, String date, byte[] body, String headers)
            throws Exception {
        Map<String, List<String>> h = new LinkedHashMap<>();
        h.put("Host", List.of("atrium.example"));
        h.put("Date", List.of(date));
        if (body != null) {
            h.put(
                    "Digest",
                    List.of("SHA-256="
                            + java.util.Base64.getEncoder()
                                    .encodeToString(java.security.MessageDigest.getInstance("SHA-256")
                                            .digest(body))));
        }
        StringBuilder text = new StringBuilder();
        for (String name : headers.split(" ")) {
            if (text.length() > 0) {
                text.append('\n');
            }
            text.append(name)
                    .append(": ")
                    .append(
                            name.equals("(request-target)")
                                    ? method.toLowerCase() + " " + path
                                    : h.entrySet().stream()
                                            .filter(e -> e.getKey().equalsIgnoreCase(name))
                                            .findFirst()
                                            .orElseThrow()
                                            .getValue()
                                            .get(0));
        }
        h.put(
                "Signature",
                List.of("keyId=\"" + keyId + "\",algorithm=\"rsa-sha256\",headers=\"" + headers + "\",signature=\""
                        + peer.opensslSign(key, text.toString()) + "\""));
        return h;
    }

    private static String now() {
        return ZonedDateTime.now(ZoneOffset.UTC).format(SigningString.HTTP_DATE);
    }

    private static final byte[] FOLLOW = "{\"type\":\"Follow\"}".getBytes(StandardCharsets.UTF_8);
    private static final String ALL = "(request-target) host date digest";

    @Test
    void aPostSignedByOpensslVerifiesAndNamesTheKeysOwner() throws Exception {
        Signer signer = signatures.verify(
                "POST",
                "/ap/stores/s/inbox",
                signed("alice", actor + "#main-key", "POST", "/ap/stores/s/inbox", now(), FOLLOW, ALL),
                FOLLOW);
        assertEquals(actor, signer.owner());
        assertEquals(actor + "#main-key", signer.keyId());
    }

    @Test
    void aMissingDateIs400() throws Exception {
        Map<String, List<String>> h = signed("alice", actor + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL);
        h.remove("Date");
        assertEquals(
                400,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", h, FOLLOW))
                        .status());
    }

    @Test
    void aDateMoreThanFiveMinutesOffIs401EvenWhenSigned() throws Exception {
        String old = ZonedDateTime.now(ZoneOffset.UTC).minusMinutes(6).format(SigningString.HTTP_DATE);
        String ahead = ZonedDateTime.now(ZoneOffset.UTC).plusMinutes(6).format(SigningString.HTTP_DATE);
        for (String date : List.of(old, ahead)) {
            SignatureRefused e = assertThrows(
                    SignatureRefused.class,
                    () -> signatures.verify(
                            "POST",
                            "/inbox",
                            signed("alice", actor + "#main-key", "POST", "/inbox", date, FOLLOW, ALL),
                            FOLLOW));
            assertEquals(401, e.status(), e.getMessage());
        }
        String fourMinutes = ZonedDateTime.now(ZoneOffset.UTC).minusMinutes(4).format(SigningString.HTTP_DATE);
        signatures.verify(
                "POST",
                "/inbox",
                signed("alice", actor + "#main-key", "POST", "/inbox", fourMinutes, FOLLOW, ALL),
                FOLLOW);
    }

    @Test
    void aBodyThatDoesNotMatchItsDigestIs400() throws Exception {
        Map<String, List<String>> h = signed("alice", actor + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL);
        byte[] other = "{\"type\":\"Delete\"}".getBytes(StandardCharsets.UTF_8);
        SignatureRefused e = assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", h, other));
        assertEquals(400, e.status());
        assertTrue(e.getMessage().contains("Digest"), e.getMessage());
        h.remove("Digest");
        assertEquals(
                400,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", h, FOLLOW))
                        .status());
    }

    @Test
    void aSignatureForAnotherPathOrWithAnotherKeyIs401() throws Exception {
        Map<String, List<String>> elsewhere =
                signed("alice", actor + "#main-key", "POST", "/other/inbox", now(), FOLLOW, ALL);
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", elsewhere, FOLLOW))
                        .status());
        peer.opensslKey("mallory");
        Map<String, List<String>> forged = signed("mallory", actor + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL);
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", forged, FOLLOW))
                        .status());
    }

    @Test
    void aSignatureThatCoversTooLittleIs401() throws Exception {
        Map<String, List<String>> dateOnly =
                signed("alice", actor + "#main-key", "POST", "/inbox", now(), FOLLOW, "date");
        SignatureRefused e =
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", dateOnly, FOLLOW));
        assertEquals(401, e.status());
        Map<String, List<String>> noDigest =
                signed("alice", actor + "#main-key", "POST", "/inbox", now(), FOLLOW, "(request-target) host date");
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", noDigest, FOLLOW))
                        .status());
    }

    @Test
    void anUnsignedOrMalformedOrUnfetchableSignatureIs401() throws Exception {
        Map<String, List<String>> h = signed("alice", actor + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL);
        Map<String, List<String>> unsigned = new LinkedHashMap<>(h);
        unsigned.remove("Signature");
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", unsigned, FOLLOW))
                        .status());
        Map<String, List<String>> malformed = new LinkedHashMap<>(h);
        malformed.put("Signature", List.of("keyId=\"unterminated"));
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", malformed, FOLLOW))
                        .status());
        Map<String, List<String>> nowhere =
                signed("alice", peer.base() + "/users/nobody#main-key", "POST", "/inbox", now(), FOLLOW, ALL);
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", nowhere, FOLLOW))
                        .status());
        Map<String, List<String>> hmac = new LinkedHashMap<>(h);
        hmac.put("Signature", List.of(h.get("Signature").get(0).replace("rsa-sha256", "hmac-sha256")));
        assertEquals(
                401,
                assertThrows(SignatureRefused.class, () -> signatures.verify("POST", "/inbox", hmac, FOLLOW))
                        .status());
    }

    @Test
    void aPeerThatRotatesItsKeyIsVerifiedWithTheNewOneAfterOneFetch() throws Exception {
        String rotating = peer.serveActor("/users/bob", peer.opensslKey("bob1"));
        signatures.verify(
                "POST", "/inbox", signed("bob1", rotating + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL), FOLLOW);
        peer.serveActor("/users/bob", peer.opensslKey("bob2"));
        int fetches = peer.received.size();
        Signer signer = signatures.verify(
                "POST", "/inbox", signed("bob2", rotating + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL), FOLLOW);
        assertEquals(rotating, signer.owner());
        assertEquals(fetches + 1, peer.received.size(), "the kept key failed, so the key was fetched once more");
    }

    private static String pemJson(String pem) {
        return com.fasterxml.jackson.databind.node.TextNode.valueOf(pem).toString();
    }

    /** An actor document at {@code path} whose {@code publicKey} is {@code keysJson} (an object or an array). */
    private static String serveActorWithKeys(Peer on, String path, String keysJson) {
        String actor = on.base() + path;
        String doc = "{\"id\":\"" + actor + "\",\"type\":\"Person\",\"inbox\":\"" + actor + "/inbox\",\"publicKey\":"
                + keysJson + "}";
        on.routes.put(path, ex -> Peer.Response.json("application/activity+json", doc));
        return actor;
    }

    private static String keyJson(String id, String owner, String pem) {
        return "{\"id\":\"" + id + "\",\"owner\":\"" + owner + "\",\"publicKeyPem\":" + pemJson(pem) + "}";
    }

    /** Issue 32, finding 1: a key document's {@code owner} is a claim; the owner's own document must list the same key. */
    @Test
    void aKeyDocumentNamingAnotherActorIsRefusedUntilThatActorListsTheSameKey() throws Exception {
        String carolPem = peer.opensslKey("carol");
        String carol = peer.serveActor("/users/carol", carolPem);
        String malloryPem = peer.opensslKey("mallory-key");
        String keyId = peer.base() + "/keys/mallory";
        peer.routes.put(
                "/keys/mallory",
                ex -> Peer.Response.json("application/activity+json", keyJson(keyId, carol, malloryPem)));

        for (int attempt = 0; attempt < 2; attempt++) {
            int fetches = peer.received.size();
            SignatureRefused e = assertThrows(
                    SignatureRefused.class,
                    () -> signatures.verify(
                            "POST",
                            "/inbox",
                            signed("mallory-key", keyId, "POST", "/inbox", now(), FOLLOW, ALL),
                            FOLLOW));
            assertEquals(401, e.status());
            assertTrue(e.getMessage().contains("does not list the key"), e.getMessage());
            assertEquals(
                    fetches + 2,
                    peer.received.size(),
                    "a refused binding is not kept: the key and its owner are fetched every time");
        }

        // carol lists the key under that id but with another PEM: still refused
        serveActorWithKeys(
                peer,
                "/users/carol",
                "[" + keyJson(carol + "#main-key", carol, carolPem) + "," + keyJson(keyId, carol, carolPem) + "]");
        SignatureRefused other = assertThrows(
                SignatureRefused.class,
                () -> signatures.verify(
                        "POST", "/inbox", signed("mallory-key", keyId, "POST", "/inbox", now(), FOLLOW, ALL), FOLLOW));
        assertEquals(401, other.status());
        assertTrue(other.getMessage().contains("lists another key"), other.getMessage());

        // carol's own document lists the key (in an array, next to her main key): her key document, believed and kept
        serveActorWithKeys(
                peer,
                "/users/carol",
                "[" + keyJson(carol + "#main-key", carol, carolPem) + "," + keyJson(keyId, carol, malloryPem) + "]");
        Signer signer = signatures.verify(
                "POST", "/inbox", signed("mallory-key", keyId, "POST", "/inbox", now(), FOLLOW, ALL), FOLLOW);
        assertEquals(carol, signer.owner());
        int fetches = peer.received.size();
        signatures.verify("POST", "/inbox", signed("mallory-key", keyId, "POST", "/inbox", now(), FOLLOW, ALL), FOLLOW);
        assertEquals(fetches, peer.received.size(), "a verified pair is kept");
    }

    /** An actor document whose key names someone else as owner is the same claim, and refused the same way. */
    @Test
    void anActorsKeyNamingAnotherOwnerIsRefused() throws Exception {
        String danPem = peer.opensslKey("dan");
        String dan = peer.serveActor("/users/dan", danPem);
        String evePem = peer.opensslKey("eve");
        String eve = serveActorWithKeys(peer, "/users/eve", keyJson(peer.base() + "/users/eve#main-key", dan, evePem));
        SignatureRefused e = assertThrows(
                SignatureRefused.class,
                () -> signatures.verify(
                        "POST",
                        "/inbox",
                        signed("eve", eve + "#main-key", "POST", "/inbox", now(), FOLLOW, ALL),
                        FOLLOW));
        assertEquals(401, e.status());
        assertTrue(e.getMessage().contains(dan), e.getMessage());
    }

    /** A key and its owner must share scheme, host and port, even when the owner lists the key. */
    @Test
    void aKeyOnAnotherOriginThanItsOwnerIsRefusedEvenWhenListed() throws Exception {
        try (Peer elsewhere = new Peer(dir)) {
            String pem = elsewhere.opensslKey("cross");
            String keyId = elsewhere.base() + "/keys/cross";
            String fay = peer.base() + "/users/fay";
            elsewhere.routes.put(
                    "/keys/cross", ex -> Peer.Response.json("application/activity+json", keyJson(keyId, fay, pem)));
            serveActorWithKeys(peer, "/users/fay", "[" + keyJson(keyId, fay, pem) + "]");
            SignatureRefused e = assertThrows(
                    SignatureRefused.class,
                    () -> signatures.verify(
                            "POST", "/inbox", signed("cross", keyId, "POST", "/inbox", now(), FOLLOW, ALL), FOLLOW));
            assertEquals(401, e.status());
            assertTrue(e.getMessage().contains("same origin"), e.getMessage());
        }
        assertTrue(dev.atrium.store.ap.api.Origins.same("https://a.example/k#1", "https://A.EXAMPLE:443/users/a"));
        assertTrue(!dev.atrium.store.ap.api.Origins.same("https://a.example/k", "http://a.example/users/a"));
        assertTrue(!dev.atrium.store.ap.api.Origins.same("https://a.example:8443/k", "https://a.example/users/a"));
    }

    @Test
    void atriumsSignaturesVerifyWithOpenssl() throws Exception {
        String local = "https://atrium.example/ap/stores/main";
        URI inbox = URI.create("https://remote.example:8443/users/alice/inbox?x=1");
        Map<String, String> headers = signatures.sign(local, "POST", inbox, FOLLOW);
        assertEquals("remote.example:8443", headers.get("Host"));
        Map<String, String> params = SigningString.parameters(headers.get("Signature"));
        assertEquals(local + "#main-key", params.get("keyid"));
        assertEquals("(request-target) host date digest", params.get("headers"));
        String text = "(request-target): post /users/alice/inbox?x=1\nhost: remote.example:8443\ndate: "
                + headers.get("Date") + "\ndigest: " + headers.get("Digest");
        String publicPem = new ActorKeyStore(database.dataSource()).keyOf(local).publicKeyPem();
        assertTrue(
                peer.opensslVerifies(publicPem, text, params.get("signature")),
                "openssl does not verify Atrium's signature");
        assertEquals(SigningString.digest(FOLLOW), headers.get("Digest"));
        // a rotated key is the actor's key from then on, on every instance (a new store reads it from the database)
        String rotatedPem =
                new ActorKeyStore(database.dataSource()).rotate(local).publicKeyPem();
        assertEquals(
                rotatedPem,
                new ActorKeyStore(database.dataSource()).keyOf(local).publicKeyPem());
        assertTrue(!rotatedPem.equals(publicPem));
    }
}
