package dev.atrium.resource.kv.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * kv resources in one PostgreSQL table, rows kept apart by resource id. Expired entries are invisible at once (every
 * read filters on {@code expires_at}) and removed lazily by the writes that meet them.
 */
@Component(service = ResourceProvider.class)
@ResourceProviderType(type = "kv", backend = "postgres")
public class PostgresKv implements ResourceProvider, KvFacet {

    private static final String LIVE = "(expires_at IS NULL OR expires_at > now())";

    private final Sql sql;

    @Activate
    public PostgresKv(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        run(() -> sql.update("DELETE FROM resource_kv_entries WHERE resource_id = ?", ctx.resourceId()));
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "postgres", "entries", "/api/resources/" + ctx.resourceId() + "/kv/entries");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            sql.count("SELECT 1");
            return Health.ok();
        } catch (RuntimeException e) {
            return Health.failing("PostgreSQL does not answer");
        }
    }

    @Override
    public KvPage list(ResourceContext ctx, String prefix, String cursor, int limit) throws ResourceException {
        String after = cursor == null ? null : decodeCursor(cursor);
        // prefix match as a range on the key (no LIKE: '%' and '_' in a prefix are plain characters)
        List<KvKey> keys = run(() -> sql.list(
                "SELECT key, expires_at FROM resource_kv_entries WHERE resource_id = ? AND " + LIVE
                        + " AND key >= ? AND left(key, ?) = ?" + (after == null ? "" : " AND key > ?")
                        + " ORDER BY key LIMIT ?",
                rs -> new KvKey(rs.getString(1), Sql.instant(rs, "expires_at")),
                after == null
                        ? new Object[] {ctx.resourceId(), prefix, prefix.length(), prefix, limit + 1}
                        : new Object[] {ctx.resourceId(), prefix, prefix.length(), prefix, after, limit + 1}));
        ctx.usage().record("reads", 1);
        if (keys.size() > limit) {
            List<KvKey> page = keys.subList(0, limit);
            return new KvPage(
                    List.copyOf(page), encodeCursor(page.get(limit - 1).name()));
        }
        return new KvPage(keys, null);
    }

    @Override
    public Optional<KvEntry> get(ResourceContext ctx, String key) throws ResourceException {
        ctx.usage().record("reads", 1);
        return run(() -> sql.one(
                "SELECT key, value, expires_at FROM resource_kv_entries WHERE resource_id = ? AND key = ? AND " + LIVE,
                rs -> new KvEntry(rs.getString(1), rs.getBytes(2), Sql.instant(rs, "expires_at")),
                ctx.resourceId(),
                key));
    }

    @Override
    public void put(ResourceContext ctx, String key, byte[] value, Duration ttl) throws ResourceException {
        Timestamp expires = ttl == null ? null : Timestamp.from(Instant.now().plus(ttl));
        run(() -> sql.update(
                "INSERT INTO resource_kv_entries (resource_id, key, value, expires_at, updated_at) VALUES (?, ?, ?, ?, now())"
                        + " ON CONFLICT (resource_id, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at, updated_at = now()",
                ctx.resourceId(),
                key,
                value,
                expires));
        ctx.usage().record("writes", 1);
    }

    @Override
    public boolean delete(ResourceContext ctx, String key) throws ResourceException {
        // an expired entry is removed too, but reported as not there: it was not live
        Boolean live = run(() -> sql.one(
                        "DELETE FROM resource_kv_entries WHERE resource_id = ? AND key = ? RETURNING " + LIVE,
                        rs -> rs.getBoolean(1),
                        ctx.resourceId(),
                        key)
                .orElse(false));
        ctx.usage().record("writes", 1);
        return live;
    }

    private static String encodeCursor(String key) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    private static String decodeCursor(String cursor) throws ResourceException {
        try {
            return new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ResourceException.badInput("cursor is not one this listing returned");
        }
    }

    /** Runs a statement; the kernel's database policy decides what a failure tells the client. */
    private static <T> T run(java.util.function.Supplier<T> call) throws ResourceException {
        try {
            return call.get();
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the kv store failed; try again", e);
        } catch (ApiException e) {
            if (e.status() == 400) {
                throw ResourceException.badInput(e.getMessage());
            }
            throw new ResourceException(
                    e.status() == 409 ? ResourceException.Kind.CONFLICT : ResourceException.Kind.UNAVAILABLE,
                    e.getMessage());
        }
    }
}
