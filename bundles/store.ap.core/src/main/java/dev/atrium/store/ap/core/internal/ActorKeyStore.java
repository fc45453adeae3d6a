package dev.atrium.store.ap.core.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.store.ap.api.ActorKeys;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Actor key pairs in {@code ap_actor_keys}: RSA 2048, the newest row of an actor is its key. The first key of an actor
 * is made under a transaction-scoped advisory lock on the actor, so two instances asking at once make one. Keys are
 * cached for a minute (a rotation on another instance reaches this one within that; a peer whose verification fails
 * fetches the key again, as Mastodon and Fedify do).
 */
@Component(service = {ActorKeys.class, ActorKeyStore.class})
public class ActorKeyStore implements ActorKeys {

    private static final long CACHE_MILLIS = 60_000;

    /** A key pair with its private half. */
    record Pair(ActorKey key, PrivateKey privateKey, long cachedAt) {}

    private final Sql sql;
    private final Map<String, Pair> cache = new ConcurrentHashMap<>();

    @Activate
    public ActorKeyStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    ActorKeyStore(DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    @Override
    public ActorKey keyOf(String actorUri) {
        return pair(actorUri).key();
    }

    @Override
    public ActorKey rotate(String actorUri) {
        Pair made = sql.tx(c -> insert(c, actorUri));
        cache.put(actorUri, made);
        return made.key();
    }

    /** The actor's current key pair, made on first use. */
    Pair pair(String actorUri) {
        Pair cached = cache.get(actorUri);
        if (cached != null && System.currentTimeMillis() - cached.cachedAt() < CACHE_MILLIS) {
            return cached;
        }
        Pair current = sql.tx(c -> {
            Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtextextended(?, 41))", actorUri);
            var newest = Sql.one(
                    c,
                    "SELECT public_pem, private_der, created_at FROM ap_actor_keys WHERE actor_uri = ? ORDER BY id DESC LIMIT 1",
                    rs -> new Object[] {rs.getString(1), rs.getBytes(2), Sql.instant(rs, "created_at")},
                    actorUri);
            if (newest.isPresent()) {
                Object[] row = newest.get();
                return new Pair(
                        new ActorKey(keyId(actorUri), actorUri, (String) row[0], (Instant) row[2]),
                        privateKey((byte[]) row[1]),
                        System.currentTimeMillis());
            }
            return insert(c, actorUri);
        });
        cache.put(actorUri, current);
        return current;
    }

    /**
     * {@code <actor>#main-key}, the usual form; but {@code <actor>/main-key}, a key document of its own, for a canonical
     * repository ({@code /ap/repos/…}): its type {@code Repository} is no actor type to generic ActivityPub servers
     * (Fedify, Mastodon), which then cannot read a key out of its document, while a key document they verify with.
     */
    static String keyId(String actorUri) {
        return actorUri.contains("/ap/repos/") ? actorUri + "/main-key" : actorUri + "#main-key";
    }

    private static Pair insert(java.sql.Connection c, String actorUri) throws java.sql.SQLException {
        KeyPair pair = generate();
        String pem = pem(pair.getPublic().getEncoded());
        Instant created = Sql.one(
                        c,
                        "INSERT INTO ap_actor_keys (actor_uri, public_pem, private_der) VALUES (?, ?, ?) RETURNING created_at",
                        rs -> Sql.instant(rs, "created_at"),
                        actorUri,
                        pem,
                        pair.getPrivate().getEncoded())
                .orElseThrow();
        return new Pair(
                new ActorKey(keyId(actorUri), actorUri, pem, created), pair.getPrivate(), System.currentTimeMillis());
    }

    private static KeyPair generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK makes no RSA keys", e);
        }
    }

    private static PrivateKey privateKey(byte[] der) {
        try {
            return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("a stored actor key does not parse", e);
        }
    }

    static String pem(byte[] spki) {
        return "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(UTF_8)).encodeToString(spki) + "\n-----END PUBLIC KEY-----\n";
    }
}
