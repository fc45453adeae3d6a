package dev.atrium.store.registry.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The registry's two tables, which this bundle owns. It knows workspaces only by id; ownership is the kernel's. */
@Component(service = RegistryStore.class)
public class RegistryStore {

    private static final String ENTRY =
            "id, space_id, actor_url, domain, store_slug, name, summary, icon_url, outbox_url, is_active, "
                    + "subscription_enabled, last_fetched_at, created_at, updated_at";
    private static final String UPDATE =
            "id, registry_entry_id, store_name, store_domain, activity_id, activity_type, object_id, "
                    + "object_type, object_name, object_summary, published, seen, created_at";

    private final Sql sql;

    @Activate
    public RegistryStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this(dataSource);
        migrations.apply(context.getBundle());
    }

    RegistryStore(DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    public record Entry(
            String id,
            String spaceId,
            String actorUrl,
            String domain,
            String storeSlug,
            String name,
            String summary,
            String iconUrl,
            String outboxUrl,
            boolean active,
            boolean subscriptionEnabled,
            Instant lastFetchedAt,
            Instant createdAt,
            Instant updatedAt) {

        static Entry of(ResultSet rs) throws SQLException {
            return new Entry(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("actor_url"),
                    rs.getString("domain"),
                    rs.getString("store_slug"),
                    rs.getString("name"),
                    rs.getString("summary"),
                    rs.getString("icon_url"),
                    rs.getString("outbox_url"),
                    rs.getBoolean("is_active"),
                    rs.getBoolean("subscription_enabled"),
                    Sql.instant(rs, "last_fetched_at"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("actor_url", actorUrl);
            m.put("domain", domain);
            m.put("store_slug", storeSlug);
            m.put("name", name);
            m.put("summary", summary);
            m.put("icon_url", iconUrl);
            m.put("is_active", active);
            m.put("subscription_enabled", subscriptionEnabled);
            m.put("last_fetched_at", lastFetchedAt == null ? null : lastFetchedAt.toString());
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            return m;
        }
    }

    public record Update(
            String id,
            String entryId,
            String storeName,
            String storeDomain,
            String activityId,
            String activityType,
            String objectId,
            String objectType,
            String objectName,
            String objectSummary,
            Instant published,
            boolean seen,
            Instant createdAt) {

        static Update of(ResultSet rs) throws SQLException {
            return new Update(
                    rs.getString("id"),
                    rs.getString("registry_entry_id"),
                    rs.getString("store_name"),
                    rs.getString("store_domain"),
                    rs.getString("activity_id"),
                    rs.getString("activity_type"),
                    rs.getString("object_id"),
                    rs.getString("object_type"),
                    rs.getString("object_name"),
                    rs.getString("object_summary"),
                    Sql.instant(rs, "published"),
                    rs.getBoolean("seen"),
                    Sql.instant(rs, "created_at"));
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("registry_entry_id", entryId);
            m.put("store_name", storeName);
            m.put("store_domain", storeDomain);
            m.put("activity_id", activityId);
            m.put("activity_type", activityType);
            m.put("object_id", objectId);
            m.put("object_type", objectType);
            m.put("object_name", objectName);
            m.put("object_summary", objectSummary);
            m.put("published", published == null ? null : published.toString());
            m.put("seen", seen);
            m.put("created_at", createdAt.toString());
            return m;
        }
    }

    /** What an outbox showed, before it is recorded. */
    public record Activity(
            String id,
            String type,
            String objectId,
            String objectType,
            String objectName,
            String objectSummary,
            Instant published) {}

    /**
     * Registers a store. With {@code active}, every other entry of the workspace becomes inactive in the same transaction.
     *
     * @throws ApiException 409 when the workspace registered this actor already
     */
    public Entry register(String spaceId, RemoteStores.StoreActor actor, boolean active, boolean subscribe) {
        try {
            return sql.tx(c -> {
                if (active) {
                    Sql.update(
                            c,
                            "UPDATE store_registry_entries SET is_active = false, updated_at = now() WHERE space_id = ? AND is_active",
                            spaceId);
                }
                return Sql.one(
                                c,
                                "INSERT INTO store_registry_entries (id, space_id, actor_url, domain, store_slug, name, summary, icon_url, "
                                        + "outbox_url, is_active, subscription_enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING "
                                        + ENTRY,
                                Entry::of,
                                Ids.id("sre"),
                                spaceId,
                                actor.actorUrl(),
                                actor.domain(),
                                actor.slug(),
                                actor.name(),
                                actor.summary(),
                                actor.iconUrl(),
                                actor.outboxUrl(),
                                active,
                                subscribe)
                        .orElseThrow();
            });
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("this workspace has registered " + actor.actorUrl() + " already");
        }
    }

    public List<Entry> list(String spaceId) {
        return sql.list(
                "SELECT " + ENTRY + " FROM store_registry_entries WHERE space_id = ? ORDER BY created_at, id",
                Entry::of,
                spaceId);
    }

    /** The entry of this workspace, or 404 as for a missing one. */
    public Entry require(String spaceId, String entryId) {
        return sql.one(
                        "SELECT " + ENTRY + " FROM store_registry_entries WHERE id = ? AND space_id = ?",
                        Entry::of,
                        entryId,
                        spaceId)
                .orElseThrow(() -> ApiException.notFound("no store registry entry " + entryId));
    }

    /** Changes the flags given (null: unchanged); activating one deactivates the workspace's others. */
    public Entry setFlags(Entry e, Boolean active, Boolean subscribe) {
        return sql.tx(c -> {
            if (Boolean.TRUE.equals(active)) {
                Sql.update(
                        c,
                        "UPDATE store_registry_entries SET is_active = false, updated_at = now() WHERE space_id = ? AND id <> ? AND is_active",
                        e.spaceId(),
                        e.id());
            }
            return Sql.one(
                            c,
                            "UPDATE store_registry_entries SET is_active = COALESCE(?::boolean, is_active), "
                                    + "subscription_enabled = COALESCE(?::boolean, subscription_enabled), updated_at = now() WHERE id = ? RETURNING "
                                    + ENTRY,
                            Entry::of,
                            active,
                            subscribe,
                            e.id())
                    .orElseThrow(() -> ApiException.notFound("no store registry entry " + e.id()));
        });
    }

    /** Takes the actor document's current name, summary, icon and outbox. */
    public Entry refreshed(Entry e, RemoteStores.StoreActor actor) {
        return sql.one(
                        "UPDATE store_registry_entries SET name = ?, summary = ?, icon_url = ?, outbox_url = ?, store_slug = ?, "
                                + "last_fetched_at = now(), updated_at = now() WHERE id = ? RETURNING " + ENTRY,
                        Entry::of,
                        actor.name(),
                        actor.summary(),
                        actor.iconUrl(),
                        actor.outboxUrl(),
                        actor.slug(),
                        e.id())
                .orElseThrow(() -> ApiException.notFound("no store registry entry " + e.id()));
    }

    public boolean delete(Entry e) {
        return sql.update("DELETE FROM store_registry_entries WHERE id = ?", e.id()) > 0;
    }

    /** Records the activities not seen before; returns how many were new. */
    public int record(Entry e, List<Activity> activities) {
        return sql.tx(c -> {
            int added = 0;
            for (Activity a : activities) {
                added += Sql.update(
                        c,
                        "INSERT INTO store_registry_updates (id, registry_entry_id, space_id, store_name, store_domain, "
                                + "activity_id, activity_type, object_id, object_type, object_name, object_summary, published) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (registry_entry_id, activity_id) DO NOTHING",
                        Ids.id("sru"),
                        e.id(),
                        e.spaceId(),
                        e.name(),
                        e.domain(),
                        a.id(),
                        a.type(),
                        a.objectId(),
                        a.objectType(),
                        a.objectName(),
                        a.objectSummary(),
                        a.published() == null ? null : Timestamp.from(a.published()));
            }
            touch(c, e);
            return added;
        });
    }

    /** Whether the entry recorded this activity already. */
    public boolean knows(Entry e, String activityId) {
        return sql.count(
                        "SELECT count(*) FROM store_registry_updates WHERE registry_entry_id = ? AND activity_id = ?",
                        e.id(),
                        activityId)
                > 0;
    }

    private static void touch(Connection c, Entry e) throws SQLException {
        Sql.update(c, "UPDATE store_registry_entries SET last_fetched_at = now() WHERE id = ?", e.id());
    }

    public List<Update> updates(String spaceId, boolean unseenOnly, int limit, int offset) {
        return sql.list(
                "SELECT " + UPDATE + " FROM store_registry_updates WHERE space_id = ?"
                        + (unseenOnly ? " AND NOT seen" : "")
                        + " ORDER BY created_at DESC, published DESC NULLS LAST, id DESC LIMIT ? OFFSET ?",
                Update::of,
                spaceId,
                limit,
                offset);
    }

    public long countUpdates(String spaceId, boolean unseenOnly) {
        return sql.count(
                "SELECT count(*) FROM store_registry_updates WHERE space_id = ?" + (unseenOnly ? " AND NOT seen" : ""),
                spaceId);
    }

    /** Marks updates of this workspace seen; ids of other workspaces or unknown ids are skipped. */
    public int markSeen(String spaceId, List<String> ids) {
        if (ids == null) {
            return sql.update("UPDATE store_registry_updates SET seen = true WHERE space_id = ? AND NOT seen", spaceId);
        }
        return sql.update(
                "UPDATE store_registry_updates SET seen = true WHERE space_id = ? AND id = ANY (?::text[])",
                spaceId,
                ids.toArray(String[]::new));
    }

    /** Entries whose subscription is on and which were not polled for {@code intervalSeconds}, oldest first. */
    public List<Entry> duePolls(long intervalSeconds, int limit) {
        return sql.list(
                "SELECT " + ENTRY
                        + " FROM store_registry_entries WHERE subscription_enabled AND (last_fetched_at IS NULL "
                        + "OR last_fetched_at < now() - make_interval(secs => ?)) ORDER BY last_fetched_at NULLS FIRST LIMIT ?",
                Entry::of,
                (double) intervalSeconds,
                limit);
    }

    public Optional<Entry> find(String entryId) {
        return sql.one("SELECT " + ENTRY + " FROM store_registry_entries WHERE id = ?", Entry::of, entryId);
    }
}
