package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Sql;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;

/**
 * The ID token signing keys: RSA 2048, RS256, made with the JDK at first start (beside it, not before it) and
 * stored in PostgreSQL (so every instance signs with the same key). Rotation makes a new signing key; the old one stays in the JWKS until the ID
 * tokens it signed have expired.
 */
@Component(service = SigningKeys.class)
public class SigningKeys {

    static final String ALGORITHM = "RS256";
    private static final Duration RELOAD = Duration.ofSeconds(30);

    private final Sql sql;
    private final ObjectMapper json = new ObjectMapper();
    private volatile Loaded loaded;
    /** Making the first key (an RSA key pair costs a cold JVM a good part of a second) is kept off the start path. */
    private final CompletableFuture<Void> firstKey;

    record Key(String kid, PrivateKey privateKey, RSAPublicKey publicKey, boolean active, Instant createdAt) {
    }

    private record Loaded(List<Key> keys, Instant at) {
    }

    @Activate
    public SigningKeys(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
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
            if (Sql.one(c, "SELECT 1 FROM oauth_signing_keys WHERE active", rs -> 1).isEmpty()) {
                insertNew(c);
            }
            return null;
        });
        loaded = null;
    }

    private static void insertNew(java.sql.Connection c) throws java.sql.SQLException {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            KeyPair pair = g.generateKeyPair();
            String kid = Ids.random("k", 16);
            Sql.update(c, "INSERT INTO oauth_signing_keys (kid, algorithm, private_key, public_key) VALUES (?, ?, ?, ?)",
                    kid, ALGORITHM, pair.getPrivate().getEncoded(), pair.getPublic().getEncoded());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Makes a new signing key; the keys it replaces stop signing at once and stay published for {@code keepOld}.
     * @return the new key's id
     */
    public String rotate(Duration keepOld) {
        sql.tx(c -> {
            Sql.update(c, "LOCK TABLE oauth_signing_keys IN EXCLUSIVE MODE");
            Sql.update(c, "UPDATE oauth_signing_keys SET active = false, retire_after = ? WHERE active", Instant.now().plus(keepOld));
            insertNew(c);
            return null;
        });
        loaded = null;
        return signingKey().kid();
    }

    private List<Key> keys() {
        try {
            firstKey.join();
        } catch (CompletionException | CancellationException e) {
            // signingKey() makes one when there is none
        }
        Loaded l = loaded;
        if (l == null || l.at().plus(RELOAD).isBefore(Instant.now())) {
            List<Key> keys = sql.list("SELECT kid, private_key, public_key, active, created_at FROM oauth_signing_keys "
                    + "WHERE active OR retire_after > now() ORDER BY active DESC, created_at DESC", rs -> {
                        try {
                            KeyFactory f = KeyFactory.getInstance("RSA");
                            return new Key(rs.getString("kid"),
                                    f.generatePrivate(new PKCS8EncodedKeySpec(rs.getBytes("private_key"))),
                                    (RSAPublicKey) f.generatePublic(new X509EncodedKeySpec(rs.getBytes("public_key"))),
                                    rs.getBoolean("active"), Sql.instant(rs, "created_at"));
                        } catch (GeneralSecurityException e) {
                            throw new IllegalStateException(e);
                        }
                    });
            l = new Loaded(keys, Instant.now());
            loaded = l;
        }
        return l.keys();
    }

    private Key signingKey() {
        return keys().stream().filter(Key::active).findFirst().orElseGet(() -> {
            ensureKey();
            return keys().stream().filter(Key::active).findFirst().orElseThrow();
        });
    }

    /** The JSON Web Key Set: every key that signs, or signed tokens that may still be valid. */
    public Map<String, Object> jwks() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Key k : keys()) {
            Map<String, Object> jwk = new LinkedHashMap<>();
            jwk.put("kty", "RSA");
            jwk.put("use", "sig");
            jwk.put("alg", ALGORITHM);
            jwk.put("kid", k.kid());
            jwk.put("n", Digests.base64Url(unsigned(k.publicKey().getModulus())));
            jwk.put("e", Digests.base64Url(unsigned(k.publicKey().getPublicExponent())));
            out.add(jwk);
        }
        return Map.of("keys", out);
    }

    /** A compact JWS (RS256) of {@code claims}, signed with the current key. */
    public String sign(Map<String, Object> claims) {
        Key key = signingKey();
        try {
            Map<String, Object> header = new LinkedHashMap<>();
            header.put("alg", ALGORITHM);
            header.put("typ", "JWT");
            header.put("kid", key.kid());
            String input = Digests.base64Url(json.writeValueAsBytes(header)) + "." + Digests.base64Url(json.writeValueAsBytes(claims));
            Signature s = Signature.getInstance("SHA256withRSA");
            s.initSign(key.privateKey());
            s.update(input.getBytes(StandardCharsets.US_ASCII));
            return input + "." + Digests.base64Url(s.sign());
        } catch (JsonProcessingException | GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] unsigned(BigInteger value) {
        byte[] bytes = value.toByteArray();
        if (bytes.length > 1 && bytes[0] == 0) {
            byte[] out = new byte[bytes.length - 1];
            System.arraycopy(bytes, 1, out, 0, out.length);
            return out;
        }
        return bytes;
    }
}
