package dev.atrium.store.ap.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Digests;
import dev.atrium.store.ap.api.HttpSignatures;
import dev.atrium.store.ap.api.Origins;
import dev.atrium.store.ap.api.RemoteDocuments;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@link HttpSignatures}: signs with the actor's key from {@link ActorKeyStore}; verifies against the key its
 * {@code keyId} names, fetched through {@link RemoteDocuments} (an actor document with {@code publicKey}, or a key
 * document with {@code owner}) and kept for ten minutes. A key's owner is believed only when it is on the key's origin
 * (scheme, host, port) and, unless the key was found in the owner's own document, the owner's actor document lists the
 * same key under that {@code keyId}; only such verified pairs are kept. A signature that fails against a kept key is
 * checked once more against a fresh fetch, so a peer's key rotation costs one fetch, not a refusal. The signed headers
 * must include {@code (request-target)}, {@code host} and {@code date}, and {@code digest} when there is a body;
 * otherwise a signature over little (Signature's default is {@code date} alone) would let a captured one be replayed
 * against any path.
 */
@Component(service = HttpSignatures.class)
public class Signatures implements HttpSignatures {

    private static final Duration KEEP_KEYS = Duration.ofMinutes(10);
    private static final int MAX_KEPT_KEYS = 10_000;
    private static final List<String> REQUIRED = List.of("(request-target)", "host", "date");

    record PeerKey(PublicKey key, String owner, Instant fetchedAt) {}

    private final ActorKeyStore keys;
    private final RemoteDocuments documents;
    private final Map<String, PeerKey> peerKeys = new ConcurrentHashMap<>();

    @Activate
    public Signatures(@Reference ActorKeyStore keys, @Reference RemoteDocuments documents) {
        this.keys = keys;
        this.documents = documents;
    }

    @Override
    public Map<String, String> sign(String actorUri, String method, URI target, byte[] body) {
        ActorKeyStore.Pair pair = keys.pair(actorUri);
        return SigningString.sign(pair.key().keyId(), pair.privateKey(), method, target, body);
    }

    @Override
    public Signer verify(String method, String pathAndQuery, Map<String, List<String>> rawHeaders, byte[] body)
            throws SignatureRefused {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        rawHeaders.forEach(
                (name, values) -> headers.merge(name.toLowerCase(Locale.ROOT), List.copyOf(values), (a, b) -> {
                    List<String> all = new java.util.ArrayList<>(a);
                    all.addAll(b);
                    return all;
                }));
        String date = first(headers, "date");
        if (date == null) {
            throw new SignatureRefused(400, "the request has no Date header");
        }
        Instant sent;
        try {
            sent = ZonedDateTime.parse(date.trim(), SigningString.HTTP_DATE).toInstant();
        } catch (DateTimeParseException e) {
            throw new SignatureRefused(400, "the Date header is not an HTTP date: " + date);
        }
        long skew = Math.abs(Duration.between(sent, Instant.now()).toSeconds());
        if (skew > MAX_SKEW_SECONDS) {
            throw new SignatureRefused(
                    401,
                    "the Date header is " + skew + " s from this server's clock; at most " + MAX_SKEW_SECONDS + " s");
        }
        boolean hasBody = body != null && body.length > 0;
        if (hasBody) {
            checkDigest(first(headers, "digest"), body);
        }
        String header = first(headers, "signature");
        if (header == null) {
            String authorization = first(headers, "authorization");
            header = authorization != null && authorization.regionMatches(true, 0, "Signature ", 0, 10)
                    ? authorization
                    : null;
        }
        if (header == null) {
            throw new SignatureRefused(401, "the request is not signed: no Signature header");
        }
        Map<String, String> params = SigningString.parameters(header);
        if (params == null || params.get("keyid") == null || params.get("signature") == null) {
            throw new SignatureRefused(401, "the Signature header is malformed");
        }
        String algorithm = params.getOrDefault("algorithm", "hs2019").toLowerCase(Locale.ROOT);
        if (!algorithm.equals("rsa-sha256") && !algorithm.equals("hs2019")) {
            throw new SignatureRefused(
                    401, "the signature algorithm " + algorithm + " is not accepted; rsa-sha256 or hs2019");
        }
        List<String> names = Arrays.stream(params.getOrDefault("headers", "date")
                        .trim()
                        .toLowerCase(Locale.ROOT)
                        .split("\\s+"))
                .toList();
        for (String needed : REQUIRED) {
            if (!names.contains(needed)) {
                throw new SignatureRefused(
                        401,
                        "the signature must cover " + String.join(", ", REQUIRED) + (hasBody ? ", digest" : "")
                                + "; it covers " + String.join(" ", names));
            }
        }
        if (hasBody && !names.contains("digest")) {
            throw new SignatureRefused(401, "the signature must cover the digest of the body");
        }
        byte[] signature;
        try {
            signature = Base64.getDecoder().decode(params.get("signature"));
        } catch (IllegalArgumentException e) {
            throw new SignatureRefused(401, "the signature is not base64");
        }
        String text;
        try {
            text = SigningString.build(names, method, pathAndQuery, headers);
        } catch (IllegalArgumentException e) {
            throw new SignatureRefused(401, e.getMessage());
        }
        String keyId = params.get("keyid");
        PeerKey kept = peerKeys.get(keyId);
        boolean fresh = kept == null || kept.fetchedAt().plus(KEEP_KEYS).isBefore(Instant.now());
        PeerKey key = fresh ? fetchKey(keyId) : kept;
        if (!verifies(key.key(), text, signature)) {
            if (fresh) {
                throw new SignatureRefused(401, "the signature does not verify with the key " + keyId);
            }
            key = fetchKey(keyId);
            if (!verifies(key.key(), text, signature)) {
                throw new SignatureRefused(401, "the signature does not verify with the key " + keyId);
            }
        }
        return new Signer(keyId, key.owner());
    }

    private static void checkDigest(String digest, byte[] body) throws SignatureRefused {
        if (digest == null) {
            throw new SignatureRefused(400, "the request has a body but no Digest header");
        }
        String expected = SigningString.digest(body).substring("SHA-256=".length());
        boolean sawSha256 = false;
        for (String part : digest.split(",")) {
            int eq = part.indexOf('=');
            if (eq > 0 && part.substring(0, eq).trim().equalsIgnoreCase("SHA-256")) {
                sawSha256 = true;
                if (Digests.constantTimeEquals(part.substring(eq + 1).trim(), expected)) {
                    return;
                }
            }
        }
        throw new SignatureRefused(
                400,
                sawSha256 ? "the Digest header does not match the body" : "the Digest header has no SHA-256 value");
    }

    private static boolean verifies(PublicKey key, String text, byte[] signature) {
        try {
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initVerify(key);
            rsa.update(text.getBytes(StandardCharsets.UTF_8));
            return rsa.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private PeerKey fetchKey(String keyId) throws SignatureRefused {
        URI uri;
        try {
            URI named = new URI(keyId);
            uri = new URI(named.getScheme(), named.getRawSchemeSpecificPart(), null);
        } catch (URISyntaxException e) {
            throw new SignatureRefused(401, "the keyId is not a URL: " + keyId);
        }
        JsonNode document;
        try {
            document = documents.fetch(URI.create(uri.toString()), null);
        } catch (RemoteDocuments.RemoteException e) {
            throw new SignatureRefused(401, "the key " + keyId + " could not be fetched: " + e.getMessage());
        }
        JsonNode key = findKey(document, keyId);
        if (key == null) {
            throw new SignatureRefused(401, "the document at " + uri + " has no public key " + keyId);
        }
        String owner = key.path("owner").asText(document.path("id").asText(""));
        if (owner.isEmpty()) {
            throw new SignatureRefused(401, "the key " + keyId + " names no owner");
        }
        // a key document may name any actor as its owner; only the same origin and the owner's own word bind them
        if (!Origins.same(keyId, owner)) {
            throw new SignatureRefused(
                    401, "the key " + keyId + " and its owner " + owner + " are not on the same origin");
        }
        PublicKey publicKey = publicKey(key.path("publicKeyPem").asText(""), keyId);
        boolean foundInOwner =
                owner.equals(uri.toString()) && owner.equals(document.path("id").asText());
        if (!foundInOwner) {
            confirmOwner(owner, keyId, publicKey);
        }
        // only a verified (key, owner) pair is kept, so a refused binding is checked again on every request
        PeerKey peer = new PeerKey(publicKey, owner, Instant.now());
        if (peerKeys.size() >= MAX_KEPT_KEYS) {
            peerKeys.clear();
        }
        peerKeys.put(keyId, peer);
        return peer;
    }

    /**
     * Requires that {@code owner}'s actor document (fetched through the guard) lists {@code keyId} with the same key, as
     * Mastodon and Fedify do: a key document's {@code owner} is the peer's claim, the actor's {@code publicKey} its proof.
     */
    private void confirmOwner(String owner, String keyId, PublicKey publicKey) throws SignatureRefused {
        JsonNode actor;
        try {
            actor = documents.fetch(new URI(owner), null);
        } catch (URISyntaxException e) {
            throw new SignatureRefused(401, "the owner of the key " + keyId + " is not a URL: " + owner);
        } catch (RemoteDocuments.RemoteException e) {
            throw new SignatureRefused(
                    401, "the owner " + owner + " of the key " + keyId + " could not be fetched: " + e.getMessage());
        }
        if (!owner.equals(actor.path("id").asText())) {
            throw new SignatureRefused(
                    401,
                    "the document at " + owner + " is not that actor (its id is "
                            + actor.path("id").asText("none") + ")");
        }
        JsonNode keys = actor.path("publicKey");
        for (JsonNode listed : keys.isArray() ? keys : List.of(keys)) {
            if (!listed.isObject() || !keyId.equals(listed.path("id").asText())) {
                continue;
            }
            if (listed.has("owner") && !owner.equals(listed.path("owner").asText())) {
                throw new SignatureRefused(
                        401, "the actor " + owner + " lists the key " + keyId + " as another actor's");
            }
            if (Arrays.equals(
                    publicKey(listed.path("publicKeyPem").asText(""), keyId).getEncoded(), publicKey.getEncoded())) {
                return;
            }
            throw new SignatureRefused(401, "the actor " + owner + " lists another key as " + keyId);
        }
        throw new SignatureRefused(401, "the actor " + owner + " does not list the key " + keyId + " as its own");
    }

    /** The key object with {@code id == keyId}: the document itself (a key document) or one of its {@code publicKey}s. */
    private static JsonNode findKey(JsonNode document, String keyId) {
        if (keyId.equals(document.path("id").asText()) && document.has("publicKeyPem")) {
            return document;
        }
        JsonNode keys = document.path("publicKey");
        for (JsonNode key : keys.isArray() ? keys : List.of(keys)) {
            if (key.isObject() && keyId.equals(key.path("id").asText())) {
                return key;
            }
        }
        return null;
    }

    private static PublicKey publicKey(String pem, String keyId) throws SignatureRefused {
        String base64 =
                pem.replaceAll("-----(BEGIN|END) (RSA )?PUBLIC KEY-----", "").replaceAll("\\s", "");
        try {
            return KeyFactory.getInstance("RSA")
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new SignatureRefused(
                    401, "the key " + keyId + " is not an RSA public key in SubjectPublicKeyInfo PEM");
        }
    }

    private static String first(Map<String, List<String>> headers, String name) {
        List<String> values = headers.get(name);
        return values == null || values.isEmpty() ? null : String.join(", ", values);
    }
}
