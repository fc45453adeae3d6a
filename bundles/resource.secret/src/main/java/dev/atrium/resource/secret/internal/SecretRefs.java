package dev.atrium.resource.secret.internal;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sealer;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import dev.atrium.resource.api.SecretFacet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.crypto.AEADBadTagException;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * secretRef resources: the value given in {@code config.value} (write-only: the core neither stores nor shows it) is
 * encrypted with AES-256-GCM under the newest operator key ({@link SecretKeys}), with a fresh 96-bit nonce and the
 * resource id as associated data, into one row per resource. No route returns it; the core reveals it only to what the
 * resource is bound to. A value encrypted under an older key stays readable and moves to the newest key the next time it
 * is read.
 */
@Component(
        service = {ResourceProvider.class, SecretRefs.class},
        configurationPid = "dev.atrium.resource.secret")
@ResourceProviderType(type = "secretRef", backend = "local")
@Designate(ocd = SecretRefs.Config.class)
public class SecretRefs implements ResourceProvider, SecretFacet {

    @ObjectClassDefinition(name = "Atrium secretRef resources")
    public @interface Config {
        @AttributeDefinition(description = "Atrium's data directory; the keys are in <data>/keys/secret-ref")
        String dataDirectory() default "data";
    }

    static final String VALUE = "value";
    /** Largest secret, in characters: room for a PEM private key or a service account's JSON. */
    static final int MAX_VALUE = 65_536;

    private static final Logger LOG = LoggerFactory.getLogger(SecretRefs.class);

    private final Sql sql;
    private final SecretKeys keys;

    @Activate
    public SecretRefs(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            BundleContext context,
            Config config) {
        this.sql = new Sql(dataSource);
        this.keys = new SecretKeys(
                Path.of(config.dataDirectory()).toAbsolutePath().resolve("keys").resolve("secret-ref"));
        migrations.apply(context.getBundle());
    }

    @Override
    public ConfigSchema configSchema() {
        return ConfigSchema.builder()
                .secret(VALUE, "the secret; write-only, never shown again", true, MAX_VALUE)
                .build();
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        store(ctx, ctx.config().get(VALUE));
        return Map.of();
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) throws ResourceException {
        store(ctx, newConfig.get(VALUE));
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        run(() -> sql.update("DELETE FROM resource_secret_values WHERE resource_id = ?", ctx.resourceId()));
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "local", "usable_through", "bindings");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            keys.current();
            sql.count("SELECT 1");
            return Health.ok();
        } catch (IOException e) {
            return Health.failing("the secret keys cannot be read or made");
        } catch (RuntimeException e) {
            return Health.failing("PostgreSQL does not answer");
        }
    }

    @Override
    public byte[] reveal(ResourceContext ctx) throws ResourceException {
        Stored stored = run(() -> sql.one(
                        "SELECT key_id, nonce, ciphertext FROM resource_secret_values WHERE resource_id = ?",
                        rs -> new Stored(rs.getString(1), rs.getBytes(2), rs.getBytes(3)),
                        ctx.resourceId()))
                .orElseThrow(() -> new ResourceException(ResourceException.Kind.NOT_FOUND, "the secret has no value"));
        SecretKeys.Key key;
        SecretKeys.Key current;
        try {
            key = keys.byId(stored.keyId())
                    .orElseThrow(() -> ResourceException.unavailable(
                            "the key " + stored.keyId()
                                    + " that encrypted this secret is gone from <data>/keys/secret-ref; put it back to read the secret",
                            null));
            current = keys.current();
        } catch (IOException e) {
            throw ResourceException.unavailable("the secret keys cannot be read", e);
        }
        byte[] plain;
        try {
            plain = sealer(key)
                    .open(new Sealer.Sealed(key.id(), stored.nonce(), stored.ciphertext()), ctx.resourceId())
                    .getBytes(StandardCharsets.UTF_8);
        } catch (IllegalStateException e) {
            if (e.getCause() instanceof AEADBadTagException) {
                throw ResourceException.unavailable(
                        "the stored secret does not decrypt under key " + key.id() + ": it was altered", e);
            }
            throw ResourceException.unavailable("the secret could not be decrypted", e);
        }
        if (!current.id().equals(key.id())) {
            // lazily onto the newest key; a concurrent write of a new value wins (the key_id condition)
            Sealer.Sealed sealed = seal(current, ctx.resourceId(), plain);
            run(() -> sql.update(
                    "UPDATE resource_secret_values SET key_id = ?, nonce = ?, ciphertext = ? WHERE resource_id = ? AND key_id = ?"
                            + " AND nonce = ?",
                    current.id(),
                    sealed.nonce(),
                    sealed.ciphertext(),
                    ctx.resourceId(),
                    key.id(),
                    stored.nonce()));
        }
        return plain;
    }

    /** A new key encrypts from now on; the older ones stay until nothing uses them. */
    String rotate() throws IOException {
        String id = keys.rotate().id();
        LOG.info("secretRef: the operator rotated the secret key; {} encrypts from now on", id);
        return id;
    }

    /** Each key, oldest first, with how many values it encrypts and whether it is the current one. */
    List<Map<String, Object>> keyUsage() throws IOException {
        List<String> ids = keys.ids();
        String current = ids.isEmpty() ? null : ids.get(ids.size() - 1);
        Map<String, Long> counts = new LinkedHashMap<>();
        sql.list(
                        "SELECT key_id, count(*) FROM resource_secret_values GROUP BY key_id",
                        rs -> Map.entry(rs.getString(1), rs.getLong(2)))
                .forEach(e -> counts.put(e.getKey(), e.getValue()));
        return ids.stream()
                .map(id -> Map.<String, Object>of(
                        "id", id, "current", id.equals(current), "values", counts.getOrDefault(id, 0L)))
                .toList();
    }

    private void store(ResourceContext ctx, Object value) throws ResourceException {
        if (!(value instanceof String text) || text.isEmpty()) {
            throw ResourceException.badInput("config." + VALUE + " is required: the secret");
        }
        SecretKeys.Key key;
        try {
            key = keys.current();
        } catch (IOException e) {
            throw ResourceException.unavailable("the secret keys cannot be read or made", e);
        }
        Sealer.Sealed sealed = seal(key, ctx.resourceId(), text.getBytes(StandardCharsets.UTF_8));
        run(() -> sql.update(
                "INSERT INTO resource_secret_values (resource_id, key_id, nonce, ciphertext) VALUES (?, ?, ?, ?)"
                        + " ON CONFLICT (resource_id) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce,"
                        + " ciphertext = EXCLUDED.ciphertext, updated_at = now()",
                ctx.resourceId(),
                key.id(),
                sealed.nonce(),
                sealed.ciphertext()));
        ctx.usage().record("writes", 1);
    }

    /** Values are text (see {@link #store}), so the sealer's strings carry them byte for byte. */
    private static Sealer.Sealed seal(SecretKeys.Key key, String resourceId, byte[] plain) {
        return sealer(key).seal(new String(plain, StandardCharsets.UTF_8), resourceId);
    }

    private static Sealer sealer(SecretKeys.Key key) {
        return Sealer.withKey(key.id(), key.key().getEncoded());
    }

    private record Stored(String keyId, byte[] nonce, byte[] ciphertext) {}

    private static <T> T run(java.util.function.Supplier<T> call) throws ResourceException {
        try {
            return call.get();
        } catch (RuntimeException e) {
            throw ResourceException.unavailable("the secret store failed; try again", e);
        }
    }

    /** For tests: the optional row of a resource. */
    Optional<String> keyIdOf(String resourceId) {
        return sql.one(
                "SELECT key_id FROM resource_secret_values WHERE resource_id = ?", rs -> rs.getString(1), resourceId);
    }
}
