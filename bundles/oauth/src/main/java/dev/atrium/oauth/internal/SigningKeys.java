package dev.atrium.oauth.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.Payload;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The ID token signing keys: RSA 2048, RS256, made with the JDK at first start (beside it, not before it) and
 * stored in PostgreSQL (so every instance signs with the same key); Nimbus JOSE+JWT signs and checks the tokens and
 * writes the key set. A rotation publishes the next key at once and lets
 * it sign only once every relying party's cached key set has it (the JWKS's cache lifetime, plus this instance's
 * reload); the key it replaces stays published until the last ID token it signed has expired.
 */
@Component(service = SigningKeys.class)
public class SigningKeys {

    static final String ALGORITHM = "RS256";
    private static final Duration RELOAD = Duration.ofSeconds(30);
    /** How long relying parties may cache the JWKS ({@code Cache-Control: max-age}). */
    static final Duration JWKS_MAX_AGE = Duration.ofMinutes(5);
    /** How long before it signs a rotated-in key is published: a cached JWKS has expired everywhere by then. */
    static final Duration ROLLOVER_LEAD = JWKS_MAX_AGE.plus(RELOAD);

    private final Sql sql;
    private final ObjectMapper json = JsonMappers.create();
    private volatile Loaded loaded;
    /** Making the first key (an RSA key pair costs a cold JVM a good part of a second) is kept off the start path. */
    private final CompletableFuture<Void> firstKey;

    /** A published key; it signs from {@code signsFrom} on, unless a later key signs by then. */
    record Key(String kid, PrivateKey privateKey, RSAPublicKey publicKey, Instant signsFrom, Instant retireAfter) {}

    /** What a rotation did: the next key, from when it signs, and until when the keys it replaces stay published. */
    record Rotation(String kid, Instant signsFrom, List<String> replaced, Instant replacedRetireAfter) {}

    private record Loaded(List<Key> keys, Instant at) {}

    @Activate
    public SigningKeys(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        migrations.apply(context.getBundle());
        this.sql = new Sql(dataSource);
        this.firstKey = CompletableFuture.runAsync(this::ensureKey, r -> {
            Thread t = new Thread(r, "atrium-oauth-first-key");
            t.setDaemon(true);
            t.start();
        });
    }

    private void ensureKey() {
        sql.tx(c -> {
            Sql.update(c, "LOCK TABLE oauth_signing_keys IN EXCLUSIVE MODE");
            if (Sql.one(c, "SELECT 1 FROM oauth_signing_keys WHERE retire_after IS NULL", rs -> 1)
                    .isEmpty()) {
                insertNew(c, null);
            }
            return null;
        });
        loaded = null;
    }

    private static String insertNew(java.sql.Connection c, Instant signsFrom) throws java.sql.SQLException {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            KeyPair pair = g.generateKeyPair();
            String kid = Ids.random("k", 16);
            Sql.update(
                    c,
                    "INSERT INTO oauth_signing_keys (kid, algorithm, private_key, public_key, signs_from) VALUES (?, ?, ?, ?, ?)",
                    kid,
                    ALGORITHM,
                    pair.getPrivate().getEncoded(),
                    pair.getPublic().getEncoded(),
                    signsFrom);
            return kid;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Makes the next signing key. It is published at once; it signs after {@link #ROLLOVER_LEAD}, or at once when
     * {@code immediate} (a key thought compromised: relying parties with a cached key set then fetch it anew when they
     * meet the unknown {@code kid}). The keys it replaces stay published until the ID tokens they sign until then expire.
     */
    public Rotation rotate(boolean immediate) {
        Instant signsFrom = immediate ? Instant.now() : Instant.now().plus(ROLLOVER_LEAD);
        Instant retire = signsFrom.plus(OAuthServer.ID_TOKEN_TTL).plus(Duration.ofMinutes(5));
        Rotation done = sql.tx(c -> {
            Sql.update(c, "LOCK TABLE oauth_signing_keys IN EXCLUSIVE MODE");
            List<String> replaced = Sql.list(
                    c,
                    "UPDATE oauth_signing_keys SET active = false, retire_after = ? WHERE retire_after IS NULL "
                            + "RETURNING kid",
                    rs -> rs.getString(1),
                    retire);
            return new Rotation(insertNew(c, signsFrom), signsFrom, replaced, retire);
        });
        loaded = null;
        return done;
    }

    /** A stored key as the operator sees it: never its material. */
    record Listed(String kid, String algorithm, Instant createdAt, Instant signsFrom, Instant retireAfter) {}

    /** The stored keys, newest first (at most 100), once the first key exists. */
    List<Listed> listed() {
        try {
            firstKey.join();
        } catch (CompletionException | CancellationException e) {
            // listed as it is: signing makes the first key when it is missing
        }
        return sql.list(
                "SELECT kid, algorithm, created_at, coalesce(signs_from, created_at) AS signs_from, retire_after "
                        + "FROM oauth_signing_keys ORDER BY created_at DESC, kid LIMIT 100",
                rs -> new Listed(
                        rs.getString("kid"),
                        rs.getString("algorithm"),
                        Sql.instant(rs, "created_at"),
                        Sql.instant(rs, "signs_from"),
                        Sql.instant(rs, "retire_after")));
    }

    private List<Key> keys() {
        try {
            firstKey.join();
        } catch (CompletionException | CancellationException e) {
            // signingKey() makes one when there is none
        }
        Loaded l = loaded;
        if (l == null || l.at().plus(RELOAD).isBefore(Instant.now())) {
            List<Key> keys = sql.list(
                    "SELECT kid, private_key, public_key, coalesce(signs_from, created_at) AS signs_from, retire_after "
                            + "FROM oauth_signing_keys WHERE retire_after IS NULL OR retire_after > now() ORDER BY 4 DESC, kid",
                    rs -> {
                        try {
                            KeyFactory f = KeyFactory.getInstance("RSA");
                            return new Key(
                                    rs.getString("kid"),
                                    f.generatePrivate(new PKCS8EncodedKeySpec(rs.getBytes("private_key"))),
                                    (RSAPublicKey) f.generatePublic(new X509EncodedKeySpec(rs.getBytes("public_key"))),
                                    Sql.instant(rs, "signs_from"),
                                    Sql.instant(rs, "retire_after"));
                        } catch (GeneralSecurityException e) {
                            throw new IllegalStateException(e);
                        }
                    });
            l = new Loaded(keys, Instant.now());
            loaded = l;
        }
        return l.keys();
    }

    /** The newest published key whose time to sign has come (keys are ordered newest first). */
    private Key signingKey() {
        Instant now = Instant.now();
        return keys().stream()
                .filter(k -> !k.signsFrom().isAfter(now))
                .findFirst()
                .orElseGet(() -> {
                    ensureKey();
                    return keys().stream()
                            .filter(k -> !k.signsFrom().isAfter(Instant.now()))
                            .findFirst()
                            .orElseThrow();
                });
    }

    /**
     * The claims of a JWS this server signed with a key it still publishes, checked by signature only (an expired
     * ID token is still a good hint of who it was for); null for anything else.
     */
    public Map<String, Object> verifiedClaims(String jws) {
        if (jws == null || jws.length() > 16_000) {
            return null;
        }
        try {
            JWSObject parsed = JWSObject.parse(jws);
            if (!JWSAlgorithm.RS256.equals(parsed.getHeader().getAlgorithm())) {
                return null;
            }
            String kid = parsed.getHeader().getKeyID();
            Key key =
                    keys().stream().filter(k -> k.kid().equals(kid)).findFirst().orElse(null);
            if (key == null || !parsed.verify(new RSASSAVerifier(key.publicKey()))) {
                return null;
            }
            return json.readValue(parsed.getPayload().toBytes(), new TypeReference<Map<String, Object>>() {});
        } catch (ParseException | JOSEException | java.io.IOException | IllegalArgumentException e) {
            return null;
        }
    }

    /** The JSON Web Key Set: every key that signs, or signed tokens that may still be valid. */
    public Map<String, Object> jwks() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Key k : keys()) {
            out.add(new RSAKey.Builder(k.publicKey())
                    .keyUse(KeyUse.SIGNATURE)
                    .algorithm(JWSAlgorithm.RS256)
                    .keyID(k.kid())
                    .build()
                    .toJSONObject());
        }
        return Map.of("keys", out);
    }

    /** A compact JWS (RS256) of {@code claims}, written as Jackson writes them, signed with the current key. */
    public String sign(Map<String, Object> claims) {
        Key key = signingKey();
        try {
            JWSObject jws = new JWSObject(
                    new JWSHeader.Builder(JWSAlgorithm.RS256)
                            .type(JOSEObjectType.JWT)
                            .keyID(key.kid())
                            .build(),
                    new Payload(json.writeValueAsBytes(claims)));
            jws.sign(new RSASSASigner(key.privateKey()));
            return jws.serialize();
        } catch (JsonProcessingException | JOSEException e) {
            throw new IllegalStateException(e);
        }
    }
}
