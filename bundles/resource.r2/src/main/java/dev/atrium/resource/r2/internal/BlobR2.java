package dev.atrium.resource.r2.internal;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.blob.api.NoSuchBlobException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ObjectFacet;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
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
 * r2 resources on the server's {@link BlobStore}: an object's bytes are a content-addressed blob in the namespace
 * {@code r2.<resource id>} (written and made durable before the key points at it, so a reader sees the old object or
 * the whole new one); its key, size, SHA-256 and media type are a row here. A blob no key of the resource points at any
 * more is deleted with the last key.
 */
@Component(service = ResourceProvider.class, configurationPid = "dev.atrium.resource.r2")
@ResourceProviderType(type = "r2", backend = "blob")
@Designate(ocd = BlobR2.Config.class)
public class BlobR2 implements ResourceProvider, ObjectFacet {

    @ObjectClassDefinition(name = "Atrium r2 resources")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Most bytes the objects of one r2 resource may hold in all (0: no limit); a put past it is"
                                + " refused with 413 and stores nothing")
        long maxBytesPerResource() default 10L << 30;
    }

    private static final Logger LOG = LoggerFactory.getLogger(BlobR2.class);

    private final Sql sql;
    private final long quota;

    @Activate
    public BlobR2(
            Config config,
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            BundleContext context) {
        this.sql = new Sql(dataSource);
        this.quota = config.maxBytesPerResource() <= 0 ? Long.MAX_VALUE : config.maxBytesPerResource();
        migrations.apply(context.getBundle());
    }

    static String namespace(ResourceContext ctx) {
        return "r2." + ctx.resourceId();
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        ctx.blobStore();
        return Map.of();
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        BlobStore blobs = ctx.blobStore();
        List<String> keys = run(() -> sql.list(
                "DELETE FROM resource_r2_objects WHERE resource_id = ? RETURNING blob_key",
                rs -> rs.getString(1),
                ctx.resourceId()));
        for (String key : keys.stream().distinct().toList()) {
            try {
                blobs.delete(key);
            } catch (IOException e) {
                LOG.warn(
                        "r2: blob {} of deleted resource {} could not be removed: {}",
                        key,
                        ctx.resourceId(),
                        e.toString());
            }
        }
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "blob", "objects", "/api/resources/" + ctx.resourceId() + "/objects");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            ctx.blobStore();
            return Health.ok();
        } catch (ResourceException e) {
            return Health.failing(e.getMessage());
        }
    }

    private static ObjectInfo info(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new ObjectInfo(
                rs.getString("key"),
                rs.getLong("size"),
                rs.getString("sha256"),
                rs.getString("content_type"),
                Sql.instant(rs, "uploaded_at"));
    }

    private static final String COLUMNS = "key, size, sha256, content_type, uploaded_at";

    @Override
    public ObjectPage list(ResourceContext ctx, String prefix, String cursor, int limit) throws ResourceException {
        String after = cursor == null ? null : decodeCursor(cursor);
        List<ObjectInfo> objects = run(() -> sql.list(
                "SELECT " + COLUMNS
                        + " FROM resource_r2_objects WHERE resource_id = ? AND key >= ? AND left(key, ?) = ?"
                        + (after == null ? "" : " AND key > ?") + " ORDER BY key LIMIT ?",
                BlobR2::info,
                after == null
                        ? new Object[] {ctx.resourceId(), prefix, prefix.length(), prefix, limit + 1}
                        : new Object[] {ctx.resourceId(), prefix, prefix.length(), prefix, after, limit + 1}));
        ctx.usage().record("list_requests", 1);
        if (objects.size() > limit) {
            List<ObjectInfo> page = List.copyOf(objects.subList(0, limit));
            return new ObjectPage(
                    page,
                    Base64.getUrlEncoder()
                            .withoutPadding()
                            .encodeToString(page.get(limit - 1).key().getBytes(StandardCharsets.UTF_8)));
        }
        return new ObjectPage(objects, null);
    }

    @Override
    public ObjectStats stats(ResourceContext ctx) throws ResourceException {
        return run(() -> sql.one(
                        "SELECT count(*), coalesce(sum(size), 0) FROM resource_r2_objects WHERE resource_id = ?",
                        rs -> new ObjectStats(rs.getLong(1), rs.getLong(2)),
                        ctx.resourceId())
                .orElse(new ObjectStats(0, 0)));
    }

    @Override
    public Optional<ObjectInfo> head(ResourceContext ctx, String key) throws ResourceException {
        return run(() -> sql.one(
                "SELECT " + COLUMNS + " FROM resource_r2_objects WHERE resource_id = ? AND key = ?",
                BlobR2::info,
                ctx.resourceId(),
                key));
    }

    @Override
    public InputStream get(ResourceContext ctx, String key, long offset, long length) throws ResourceException {
        String blobKey = run(() -> sql.one(
                        "SELECT blob_key FROM resource_r2_objects WHERE resource_id = ? AND key = ?",
                        rs -> rs.getString(1),
                        ctx.resourceId(),
                        key))
                .orElseThrow(() -> ResourceException.notFound("object not found"));
        try {
            InputStream in = ctx.blobStore().open(blobKey, offset, length);
            ctx.usage().record("reads", 1);
            return in;
        } catch (NoSuchBlobException e) {
            throw ResourceException.notFound("object not found");
        } catch (IllegalArgumentException e) {
            throw ResourceException.badInput("the range lies outside the object");
        } catch (IOException e) {
            throw ResourceException.unavailable("the blob store cannot be read now", e);
        }
    }

    @Override
    public ObjectInfo put(ResourceContext ctx, String key, InputStream content, String contentType, long maxBytes)
            throws ResourceException {
        BlobStore blobs = ctx.blobStore();
        // what the other keys hold: the new object may take the rest of the quota (the one it replaces is freed)
        long others = run(() -> sql.count(
                "SELECT coalesce(sum(size), 0) FROM resource_r2_objects WHERE resource_id = ? AND key <> ?",
                ctx.resourceId(),
                key));
        long room = quota == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, quota - others);
        Blob blob;
        try {
            blob = blobs.put(namespace(ctx), content, Math.min(maxBytes, room));
        } catch (BlobTooLargeException e) {
            if (room < maxBytes) {
                throw quotaExceeded(others);
            }
            throw new ResourceException(
                    ResourceException.Kind.TOO_LARGE, "an object must be at most " + maxBytes + " bytes");
        } catch (IOException e) {
            throw ResourceException.unavailable("the object could not be stored", e);
        }
        String previous;
        try {
            previous = run(() -> sql.tx(c -> {
                // one put of a resource at a time past this point: two puts that each fit must not together pass the
                // quota
                Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('atrium.r2.quota'), hashtext(?))", ctx.resourceId());
                if (quota != Long.MAX_VALUE) {
                    long held = Sql.count(
                            c,
                            "SELECT coalesce(sum(size), 0) FROM resource_r2_objects WHERE resource_id = ? AND key <> ?",
                            ctx.resourceId(),
                            key);
                    if (held + blob.size() > quota) {
                        throw new QuotaRefusal(held);
                    }
                }
                return putRow(c, ctx, key, blob, contentType);
            }));
        } catch (QuotaRefusal refused) {
            collect(ctx, blobs, blob.key());
            throw quotaExceeded(refused.held);
        }
        if (previous != null && !previous.equals(blob.key())) {
            collect(ctx, blobs, previous);
        }
        ctx.usage().record("writes", 1);
        ctx.usage().record("bytes_written", blob.size());
        return head(ctx, key)
                .orElseThrow(() -> ResourceException.unavailable("the object was replaced meanwhile", null));
    }

    /** Points {@code key} at the blob; answers the blob it pointed at before, or null. */
    private static String putRow(java.sql.Connection c, ResourceContext ctx, String key, Blob blob, String contentType)
            throws java.sql.SQLException {
        String old = Sql.one(
                        c,
                        "SELECT blob_key FROM resource_r2_objects WHERE resource_id = ? AND key = ? FOR UPDATE",
                        rs -> rs.getString(1),
                        ctx.resourceId(),
                        key)
                .orElse(null);
        Sql.update(
                c,
                "INSERT INTO resource_r2_objects (resource_id, key, blob_key, size, sha256, content_type, uploaded_at)"
                        + " VALUES (?, ?, ?, ?, ?, ?, now()) ON CONFLICT (resource_id, key) DO UPDATE SET blob_key = EXCLUDED.blob_key,"
                        + " size = EXCLUDED.size, sha256 = EXCLUDED.sha256, content_type = EXCLUDED.content_type, uploaded_at = now()",
                ctx.resourceId(),
                key,
                blob.key(),
                blob.size(),
                blob.sha256(),
                contentType);
        return old;
    }

    private ResourceException quotaExceeded(long held) {
        // 413, as a workspace's storage quota is: the request asked for more room than there is
        return new ResourceException(
                ResourceException.Kind.TOO_LARGE,
                "this r2 resource may hold at most " + quota + " bytes and holds " + held
                        + " in its other objects; delete some, or ask the operator for more");
    }

    /** Leaves the transaction that found the quota passed, which stores nothing. */
    private static final class QuotaRefusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient long held;

        QuotaRefusal(long held) {
            super(null, null, false, false);
            this.held = held;
        }
    }

    @Override
    public boolean delete(ResourceContext ctx, String key) throws ResourceException {
        Optional<String> blobKey = run(() -> sql.one(
                "DELETE FROM resource_r2_objects WHERE resource_id = ? AND key = ? RETURNING blob_key",
                rs -> rs.getString(1),
                ctx.resourceId(),
                key));
        if (blobKey.isEmpty()) {
            return false;
        }
        collect(ctx, ctx.blobStore(), blobKey.get());
        ctx.usage().record("writes", 1);
        return true;
    }

    /** Deletes {@code blobKey} when no key of the resource points at it any more (same bytes under two keys share one blob). */
    private void collect(ResourceContext ctx, BlobStore blobs, String blobKey) throws ResourceException {
        long users = run(() -> sql.count(
                "SELECT count(*) FROM resource_r2_objects WHERE resource_id = ? AND blob_key = ?",
                ctx.resourceId(),
                blobKey));
        if (users == 0) {
            try {
                blobs.delete(blobKey);
            } catch (IOException e) {
                LOG.warn("r2: unreferenced blob {} could not be removed: {}", blobKey, e.toString());
            }
        }
    }

    private static String decodeCursor(String cursor) throws ResourceException {
        try {
            return new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ResourceException.badInput("cursor is not one this listing returned");
        }
    }

    private static <T> T run(Supplier<T> call) throws ResourceException {
        try {
            return call.get();
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the object store failed; try again", e);
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
