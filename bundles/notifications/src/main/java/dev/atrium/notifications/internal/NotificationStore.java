package dev.atrium.notifications.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The notifications tables, which this bundle owns. A notification belongs to one Principal and has a position in
 * that Principal's stream ({@code seq}, dense, committed in order): what the live streams resume after.
 */
@Component(service = NotificationStore.class)
public class NotificationStore {

    static final ObjectMapper JSON = JsonMappers.create();
    static final String CHANNEL = "atrium_notifications";
    /** The types this server posts, shown in the preferences with their default (on). */
    static final List<String> KNOWN_TYPES =
            List.of("run.finished", "run.failed", "reminder.fired", "share.accessed", "notification.test");

    private static final String COLUMNS =
            "id, principal_id, seq, space_id, type, title, body, link, data::text AS data, silent, read_at, created_at";

    private final Sql sql;
    private final List<Consumer<Notification>> committed = new CopyOnWriteArrayList<>();

    @Activate
    public NotificationStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    /** A stored notification with its JSON made once (every subscriber of its Principal gets the same bytes). */
    public record Notification(
            String id,
            String principalId,
            long seq,
            String spaceId,
            String type,
            String title,
            String body,
            String link,
            JsonNode data,
            boolean silent,
            Instant readAt,
            Instant createdAt,
            String json) {

        static Notification of(ResultSet rs) throws SQLException {
            try {
                return of(
                        rs.getString("id"),
                        rs.getString("principal_id"),
                        rs.getLong("seq"),
                        rs.getString("space_id"),
                        rs.getString("type"),
                        rs.getString("title"),
                        rs.getString("body"),
                        rs.getString("link"),
                        JSON.readTree(rs.getString("data")),
                        rs.getBoolean("silent"),
                        Sql.instant(rs, "read_at"),
                        Sql.instant(rs, "created_at"));
            } catch (JsonProcessingException e) {
                throw new SQLException(e);
            }
        }

        static Notification of(
                String id,
                String principalId,
                long seq,
                String spaceId,
                String type,
                String title,
                String body,
                String link,
                JsonNode data,
                boolean silent,
                Instant readAt,
                Instant createdAt) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("seq", seq);
            m.put("type", type);
            m.put("title", title);
            m.put("body", body);
            m.put("link", link);
            m.put("data", data);
            m.put("space_id", spaceId);
            m.put("read", readAt != null);
            m.put("read_at", readAt == null ? null : readAt.toString());
            m.put("silent", silent);
            m.put("created_at", createdAt.toString());
            try {
                return new Notification(
                        id,
                        principalId,
                        seq,
                        spaceId,
                        type,
                        title,
                        body,
                        link,
                        data,
                        silent,
                        readAt,
                        createdAt,
                        JSON.writeValueAsString(m));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        JsonNode toJson() {
            try {
                return JSON.readTree(json);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** A Principal's choices; {@code types} holds only what the Principal set. */
    public record Settings(boolean enabled, Map<String, Boolean> types, Instant mutedUntil, Instant updatedAt) {
        static final Settings DEFAULT = new Settings(true, Map.of(), null, null);

        boolean wants(String type) {
            return enabled && types.getOrDefault(type, true);
        }

        boolean mutedAt(Instant now) {
            return mutedUntil != null && mutedUntil.isAfter(now);
        }

        Map<String, Boolean> allTypes() {
            Map<String, Boolean> all = new TreeMap<>();
            KNOWN_TYPES.forEach(t -> all.put(t, true));
            all.putAll(types);
            return all;
        }
    }

    /**
     * Stores a notification at the Principal's next stream position and announces it to every instance, in one
     * transaction; empty when the Principal's settings turn it away. Local subscribers hear of it once it committed.
     */
    public Optional<Notification> post(
            String principalId,
            String spaceId,
            String type,
            String title,
            String body,
            String link,
            Map<String, Object> data) {
        String json;
        try {
            json = JSON.writeValueAsString(data);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("data must be JSON: " + e.getOriginalMessage());
        }
        Optional<Notification> posted = sql.tx(c -> {
            Settings s = settings(c, principalId);
            if (!s.wants(type)) {
                return Optional.<Notification>empty();
            }
            return Sql.one(
                    c,
                    "WITH s AS (INSERT INTO notification_streams (principal_id, last_seq) VALUES (?, 1) "
                            + "ON CONFLICT (principal_id) DO UPDATE SET last_seq = notification_streams.last_seq + 1 RETURNING last_seq), "
                            + "n AS (INSERT INTO notifications (id, principal_id, seq, space_id, type, title, body, link, data, silent) "
                            + "SELECT ?, ?, last_seq, ?, ?, ?, ?, ?, ?::jsonb, ? FROM s RETURNING " + COLUMNS + ") "
                            + "SELECT n.*, pg_notify(?, n.principal_id || ':' || n.seq) FROM n",
                    Notification::of,
                    principalId,
                    Ids.id("ntf"),
                    principalId,
                    spaceId,
                    type,
                    title,
                    body,
                    link,
                    json,
                    s.mutedAt(Instant.now()),
                    CHANNEL);
        });
        posted.ifPresent(n -> committed.forEach(l -> l.accept(n)));
        return posted;
    }

    void onCommitted(Consumer<Notification> listener) {
        committed.add(listener);
    }

    void removeCommitted(Consumer<Notification> listener) {
        committed.remove(listener);
    }

    /** The Principal's notifications after stream position {@code afterSeq}, in order. */
    public List<Notification> after(String principalId, long afterSeq, int limit) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM notifications WHERE principal_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                Notification::of,
                principalId,
                afterSeq,
                limit);
    }

    /** The Principal's last stream position (0: none yet). */
    public long lastSeq(String principalId) {
        return sql.one(
                        "SELECT last_seq FROM notification_streams WHERE principal_id = ?",
                        rs -> rs.getLong(1),
                        principalId)
                .orElse(0L);
    }

    /**
     * A page of the Principal's notifications, newest first ({@code read} null for both, {@code type} null for every
     * type), its total and the unread count, read from one snapshot so that they agree.
     */
    public record Page(List<Notification> items, long total, long unread) {}

    public Page page(String principalId, Boolean read, String type, int limit, int offset) {
        return sql.snapshot(c -> new Page(
                Sql.list(
                        c,
                        "SELECT " + COLUMNS + " FROM notifications WHERE principal_id = ? " + filter(read, type)
                                + " ORDER BY seq DESC LIMIT ? OFFSET ?",
                        Notification::of,
                        args(principalId, type, limit, offset)),
                Sql.count(
                        c,
                        "SELECT count(*) FROM notifications WHERE principal_id = ? " + filter(read, type),
                        args(principalId, type)),
                Sql.count(
                        c,
                        "SELECT count(*) FROM notifications WHERE principal_id = ? " + filter(false, null),
                        args(principalId, null))));
    }

    public long count(String principalId, Boolean read, String type) {
        return sql.count(
                "SELECT count(*) FROM notifications WHERE principal_id = ? " + filter(read, type),
                args(principalId, type));
    }

    private static String filter(Boolean read, String type) {
        return (read == null ? "" : read ? "AND read_at IS NOT NULL " : "AND read_at IS NULL ")
                + (type == null ? "" : "AND type = ? ");
    }

    private static Object[] args(String principalId, String type, Object... more) {
        List<Object> a = new java.util.ArrayList<>();
        a.add(principalId);
        if (type != null) {
            a.add(type);
        }
        a.addAll(List.of(more));
        return a.toArray();
    }

    public Optional<Notification> get(String principalId, String id) {
        return sql.one(
                "SELECT " + COLUMNS + " FROM notifications WHERE id = ? AND principal_id = ?",
                Notification::of,
                id,
                principalId);
    }

    /** Marks one read or unread; empty when the Principal has no such notification. */
    public Optional<Notification> markRead(String principalId, String id, boolean read) {
        return sql.one(
                "UPDATE notifications SET read_at = CASE WHEN ? THEN coalesce(read_at, now()) END WHERE id = ? AND principal_id = ? "
                        + "RETURNING " + COLUMNS,
                Notification::of,
                read,
                id,
                principalId);
    }

    /**
     * Marks the given notifications read, all or none: when one of them is not the Principal's, nothing changes
     * and the result is empty. Returns how many were unread.
     */
    public Optional<Integer> markRead(String principalId, List<String> ids) {
        return sql.tx(c -> {
            String[] array = ids.toArray(String[]::new);
            long mine = Sql.count(
                    c,
                    "SELECT count(*) FROM notifications WHERE principal_id = ? AND id = ANY (?)",
                    principalId,
                    array);
            if (mine != ids.stream().distinct().count()) {
                return Optional.empty();
            }
            return Optional.of(Sql.update(
                    c,
                    "UPDATE notifications SET read_at = now() WHERE principal_id = ? AND id = ANY (?) AND read_at IS NULL",
                    principalId,
                    array));
        });
    }

    /** Marks every unread notification (of {@code type}, when given) read; returns how many. */
    public int markAllRead(String principalId, String type) {
        return sql.update(
                "UPDATE notifications SET read_at = now() WHERE principal_id = ? AND read_at IS NULL"
                        + (type == null ? "" : " AND type = ?"),
                type == null ? new Object[] {principalId} : new Object[] {principalId, type});
    }

    public Settings settings(String principalId) {
        return sql.run(c -> settings(c, principalId));
    }

    private static Settings settings(java.sql.Connection c, String principalId) throws SQLException {
        return Sql.one(
                        c,
                        "SELECT enabled, types::text AS types, muted_until, updated_at FROM notification_settings WHERE principal_id = ?",
                        NotificationStore::settingsOf,
                        principalId)
                .orElse(Settings.DEFAULT);
    }

    private static Settings settingsOf(ResultSet rs) throws SQLException {
        Map<String, Boolean> types = new TreeMap<>();
        try {
            JSON.readTree(rs.getString("types"))
                    .fields()
                    .forEachRemaining(e -> types.put(e.getKey(), e.getValue().asBoolean(true)));
        } catch (JsonProcessingException e) {
            throw new SQLException(e);
        }
        return new Settings(
                rs.getBoolean("enabled"), types, Sql.instant(rs, "muted_until"), Sql.instant(rs, "updated_at"));
    }

    /**
     * Changes what is given: {@code enabled} and {@code types} (merged into the Principal's) when not null; the mute
     * when {@code setMute} ({@code mutedUntil} null unmutes).
     */
    public Settings update(
            String principalId, Boolean enabled, Map<String, Boolean> types, boolean setMute, Instant mutedUntil) {
        String typesJson;
        try {
            typesJson = JSON.writeValueAsString(types == null ? Map.of() : types);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        java.sql.Timestamp mute = mutedUntil == null ? null : java.sql.Timestamp.from(mutedUntil);
        return sql.one(
                        "INSERT INTO notification_settings AS s (principal_id, enabled, types, muted_until) "
                                + "VALUES (?, coalesce(?, true), ?::jsonb, ?) ON CONFLICT (principal_id) DO UPDATE SET "
                                + "enabled = coalesce(?, s.enabled), types = s.types || ?::jsonb, "
                                + "muted_until = CASE WHEN ? THEN ? ELSE s.muted_until END, updated_at = now() "
                                + "RETURNING enabled, types::text AS types, muted_until, updated_at",
                        NotificationStore::settingsOf,
                        principalId,
                        enabled,
                        typesJson,
                        mute,
                        enabled,
                        typesJson,
                        setMute,
                        mute)
                .orElseThrow();
    }
}
