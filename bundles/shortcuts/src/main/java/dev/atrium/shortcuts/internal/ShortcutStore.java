package dev.atrium.shortcuts.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The shortcut tables, which this bundle owns. Every change that moves positions holds a transaction-scoped advisory
 * lock on the list it changes (a Principal's shortcuts, a workspace's groups, a group's items), so concurrent changes
 * of one list take turns and its positions stay 0..n-1.
 */
@Component(service = ShortcutStore.class)
public class ShortcutStore {

    static final int MAX_SHORTCUTS = 200;
    static final int MAX_GROUPS = 100;
    static final int MAX_ITEMS = 200;

    private static final String SHORTCUT = "id, title, url, icon, position, created_at, updated_at";
    private static final String GROUP = "id, space_id, name, position, created_at, updated_at";
    private static final String ITEM = "id, group_id, title, url, icon, position, created_at";

    private final Sql sql;

    @Activate
    public ShortcutStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    public record Shortcut(
            String id, String title, String url, String icon, int position, String createdAt, String updatedAt) {
        static Shortcut of(ResultSet rs) throws SQLException {
            return new Shortcut(
                    rs.getString("id"),
                    rs.getString("title"),
                    rs.getString("url"),
                    rs.getString("icon"),
                    rs.getInt("position"),
                    Sql.instant(rs, "created_at").toString(),
                    Sql.instant(rs, "updated_at").toString());
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("title", title);
            m.put("url", url);
            m.put("icon", icon);
            m.put("position", position);
            m.put("created_at", createdAt);
            m.put("updated_at", updatedAt);
            return m;
        }
    }

    public record Item(
            String id, String groupId, String title, String url, String icon, int position, String createdAt) {
        static Item of(ResultSet rs) throws SQLException {
            return new Item(
                    rs.getString("id"),
                    rs.getString("group_id"),
                    rs.getString("title"),
                    rs.getString("url"),
                    rs.getString("icon"),
                    rs.getInt("position"),
                    Sql.instant(rs, "created_at").toString());
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("group_id", groupId);
            m.put("title", title);
            m.put("url", url);
            m.put("icon", icon);
            m.put("position", position);
            m.put("created_at", createdAt);
            return m;
        }
    }

    public record Group(
            String id,
            String spaceId,
            String name,
            int position,
            String createdAt,
            String updatedAt,
            List<Item> items) {
        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("name", name);
            m.put("position", position);
            m.put("items", items.stream().map(Item::toJson).toList());
            m.put("created_at", createdAt);
            m.put("updated_at", updatedAt);
            return m;
        }
    }

    /** What a shortcut or an item is: a title, where it leads, an optional icon name. */
    public record Link(String title, String url, String icon) {}

    private static void lock(Connection c, String list) throws SQLException {
        Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext(?))", "shortcuts:" + list);
    }

    // ---- a Principal's shortcuts

    public List<Shortcut> shortcuts(String principalId) {
        return sql.list(
                "SELECT " + SHORTCUT + " FROM shortcuts WHERE principal_id = ? ORDER BY position",
                Shortcut::of,
                principalId);
    }

    public Optional<Shortcut> shortcut(String principalId, String id) {
        return sql.one(
                "SELECT " + SHORTCUT + " FROM shortcuts WHERE id = ? AND principal_id = ?",
                Shortcut::of,
                id,
                principalId);
    }

    /** Appends a shortcut at the end; 409 when the Principal has {@link #MAX_SHORTCUTS}. */
    public Shortcut create(String principalId, Link link) {
        return sql.tx(c -> {
            lock(c, principalId);
            long n = Sql.count(c, "SELECT count(*) FROM shortcuts WHERE principal_id = ?", principalId);
            if (n >= MAX_SHORTCUTS) {
                throw ApiException.conflict("at most " + MAX_SHORTCUTS + " shortcuts; delete one first");
            }
            return Sql.one(
                            c,
                            "INSERT INTO shortcuts (id, principal_id, title, url, icon, position) VALUES (?, ?, ?, ?, ?, ?) RETURNING "
                                    + SHORTCUT,
                            Shortcut::of,
                            Ids.id("sc"),
                            principalId,
                            link.title(),
                            link.url(),
                            link.icon(),
                            (int) n)
                    .orElseThrow();
        });
    }

    public Optional<Shortcut> update(String principalId, String id, Link link) {
        return sql.one(
                "UPDATE shortcuts SET title = ?, url = ?, icon = ?, updated_at = now() WHERE id = ? AND principal_id = ? RETURNING "
                        + SHORTCUT,
                Shortcut::of,
                link.title(),
                link.url(),
                link.icon(),
                id,
                principalId);
    }

    /** Deletes and closes the gap it leaves. */
    public boolean delete(String principalId, String id) {
        return sql.tx(c -> {
            lock(c, principalId);
            Optional<Integer> position = Sql.one(
                    c,
                    "DELETE FROM shortcuts WHERE id = ? AND principal_id = ? RETURNING position",
                    rs -> rs.getInt(1),
                    id,
                    principalId);
            position.ifPresent(p -> closeGap(c, "shortcuts", "principal_id", principalId, p));
            return position.isPresent();
        });
    }

    /**
     * Puts the Principal's shortcuts in the order of {@code ids}, which must name each of them exactly once.
     * Empty (nothing changed) when an id is not one of the Principal's; 400 when some are missing or repeated.
     */
    public Optional<List<Shortcut>> reorder(String principalId, List<String> ids) {
        return sql.tx(c -> {
            lock(c, principalId);
            List<String> mine =
                    Sql.list(c, "SELECT id FROM shortcuts WHERE principal_id = ?", rs -> rs.getString(1), principalId);
            if (!mine.containsAll(ids)) {
                return Optional.<List<Shortcut>>empty();
            }
            if (ids.size() != mine.size() || ids.stream().distinct().count() != ids.size()) {
                throw ApiException.badRequest(
                        "ids must list every one of your " + mine.size() + " shortcuts exactly once");
            }
            Sql.update(
                    c,
                    "UPDATE shortcuts s SET position = o.ord - 1, updated_at = now() FROM unnest(?::text[]) WITH ORDINALITY AS o(id, ord) "
                            + "WHERE s.id = o.id AND s.principal_id = ? AND s.position <> o.ord - 1",
                    ids.toArray(String[]::new),
                    principalId);
            return Optional.of(Sql.list(
                    c,
                    "SELECT " + SHORTCUT + " FROM shortcuts WHERE principal_id = ? ORDER BY position",
                    Shortcut::of,
                    principalId));
        });
    }

    private static void closeGap(Connection c, String table, String column, String owner, int position) {
        try {
            Sql.update(
                    c,
                    "UPDATE " + table + " SET position = position - 1 WHERE " + column + " = ? AND position > ?",
                    owner,
                    position);
        } catch (SQLException e) {
            throw Sql.translate(e);
        }
    }

    // ---- a workspace's groups

    public List<Group> groups(String spaceId) {
        List<Group> bare = sql.list(
                "SELECT " + GROUP + " FROM shortcut_groups WHERE space_id = ? ORDER BY position",
                ShortcutStore::bareGroup,
                spaceId);
        Map<String, List<Item>> items = new LinkedHashMap<>();
        sql.list(
                        "SELECT i." + ITEM.replace(", ", ", i.")
                                + " FROM shortcut_items i JOIN shortcut_groups g ON g.id = i.group_id "
                                + "WHERE g.space_id = ? ORDER BY i.group_id, i.position",
                        Item::of,
                        spaceId)
                .forEach(i -> items.computeIfAbsent(i.groupId(), k -> new java.util.ArrayList<>())
                        .add(i));
        return bare.stream()
                .map(g -> withItems(g, items.getOrDefault(g.id(), List.of())))
                .toList();
    }

    public Optional<Group> group(String spaceId, String groupId) {
        return sql.run(c -> group(c, spaceId, groupId));
    }

    private static Optional<Group> group(Connection c, String spaceId, String groupId) throws SQLException {
        Optional<Group> bare = Sql.one(
                c,
                "SELECT " + GROUP + " FROM shortcut_groups WHERE id = ? AND space_id = ?",
                ShortcutStore::bareGroup,
                groupId,
                spaceId);
        if (bare.isEmpty()) {
            return bare;
        }
        return Optional.of(withItems(
                bare.get(),
                Sql.list(
                        c,
                        "SELECT " + ITEM + " FROM shortcut_items WHERE group_id = ? ORDER BY position",
                        Item::of,
                        groupId)));
    }

    private static Group bareGroup(ResultSet rs) throws SQLException {
        return new Group(
                rs.getString("id"),
                rs.getString("space_id"),
                rs.getString("name"),
                rs.getInt("position"),
                Sql.instant(rs, "created_at").toString(),
                Sql.instant(rs, "updated_at").toString(),
                List.of());
    }

    private static Group withItems(Group g, List<Item> items) {
        return new Group(g.id(), g.spaceId(), g.name(), g.position(), g.createdAt(), g.updatedAt(), List.copyOf(items));
    }

    /** Removes every shortcut group of a workspace, with its items (an import that failed after this part). */
    public int deleteGroups(String spaceId) {
        return sql.update("DELETE FROM shortcut_groups WHERE space_id = ?", spaceId);
    }

    /** A group at the end of the workspace's, with its first items; 409 past {@link #MAX_GROUPS}. */
    public Group createGroup(String spaceId, String name, List<Link> items) {
        return sql.tx(c -> {
            lock(c, spaceId);
            long n = Sql.count(c, "SELECT count(*) FROM shortcut_groups WHERE space_id = ?", spaceId);
            if (n >= MAX_GROUPS) {
                throw ApiException.conflict("a workspace has at most " + MAX_GROUPS + " shortcut groups");
            }
            String id = Ids.id("scg");
            Sql.update(
                    c,
                    "INSERT INTO shortcut_groups (id, space_id, name, position) VALUES (?, ?, ?, ?)",
                    id,
                    spaceId,
                    name,
                    (int) n);
            for (int i = 0; i < items.size(); i++) {
                Link l = items.get(i);
                Sql.update(
                        c,
                        "INSERT INTO shortcut_items (id, group_id, title, url, icon, position) VALUES (?, ?, ?, ?, ?, ?)",
                        Ids.id("sci"),
                        id,
                        l.title(),
                        l.url(),
                        l.icon(),
                        i);
            }
            return group(c, spaceId, id).orElseThrow();
        });
    }

    /** Renames and/or moves a group (the others shift to keep 0..n-1); empty when the workspace has no such group. */
    public Optional<Group> updateGroup(String spaceId, String groupId, String name, Integer position) {
        return sql.tx(c -> {
            lock(c, spaceId);
            Optional<Integer> from = Sql.one(
                    c,
                    "SELECT position FROM shortcut_groups WHERE id = ? AND space_id = ? FOR UPDATE",
                    rs -> rs.getInt(1),
                    groupId,
                    spaceId);
            if (from.isEmpty()) {
                return Optional.<Group>empty();
            }
            if (position != null) {
                long n = Sql.count(c, "SELECT count(*) FROM shortcut_groups WHERE space_id = ?", spaceId);
                if (position >= n) {
                    throw ApiException.badRequest("position must be between 0 and " + (n - 1));
                }
                int f = from.get();
                int t = position;
                if (t < f) {
                    Sql.update(
                            c,
                            "UPDATE shortcut_groups SET position = position + 1 WHERE space_id = ? AND position >= ? AND position < ?",
                            spaceId,
                            t,
                            f);
                } else if (t > f) {
                    Sql.update(
                            c,
                            "UPDATE shortcut_groups SET position = position - 1 WHERE space_id = ? AND position > ? AND position <= ?",
                            spaceId,
                            f,
                            t);
                }
                Sql.update(c, "UPDATE shortcut_groups SET position = ? WHERE id = ?", t, groupId);
            }
            Sql.update(
                    c,
                    "UPDATE shortcut_groups SET name = coalesce(?, name), updated_at = now() WHERE id = ?",
                    name,
                    groupId);
            return group(c, spaceId, groupId);
        });
    }

    public boolean deleteGroup(String spaceId, String groupId) {
        return sql.tx(c -> {
            lock(c, spaceId);
            Optional<Integer> position = Sql.one(
                    c,
                    "DELETE FROM shortcut_groups WHERE id = ? AND space_id = ? RETURNING position",
                    rs -> rs.getInt(1),
                    groupId,
                    spaceId);
            position.ifPresent(p -> closeGap(c, "shortcut_groups", "space_id", spaceId, p));
            return position.isPresent();
        });
    }

    /** Appends an item to a group of the workspace; empty when there is no such group; 409 past {@link #MAX_ITEMS}. */
    public Optional<Item> addItem(String spaceId, String groupId, Link link) {
        return sql.tx(c -> {
            lock(c, groupId);
            if (Sql.count(c, "SELECT count(*) FROM shortcut_groups WHERE id = ? AND space_id = ?", groupId, spaceId)
                    == 0) {
                return Optional.<Item>empty();
            }
            long n = Sql.count(c, "SELECT count(*) FROM shortcut_items WHERE group_id = ?", groupId);
            if (n >= MAX_ITEMS) {
                throw ApiException.conflict("a shortcut group has at most " + MAX_ITEMS + " items");
            }
            Optional<Item> item = Sql.one(
                    c,
                    "INSERT INTO shortcut_items (id, group_id, title, url, icon, position) VALUES (?, ?, ?, ?, ?, ?) RETURNING "
                            + ITEM,
                    Item::of,
                    Ids.id("sci"),
                    groupId,
                    link.title(),
                    link.url(),
                    link.icon(),
                    (int) n);
            Sql.update(c, "UPDATE shortcut_groups SET updated_at = now() WHERE id = ?", groupId);
            return item;
        });
    }

    public boolean removeItem(String spaceId, String groupId, String itemId) {
        return sql.tx(c -> {
            lock(c, groupId);
            Optional<Integer> position = Sql.one(
                    c,
                    "DELETE FROM shortcut_items i USING shortcut_groups g WHERE i.id = ? AND i.group_id = ? "
                            + "AND g.id = i.group_id AND g.space_id = ? RETURNING i.position",
                    rs -> rs.getInt(1),
                    itemId,
                    groupId,
                    spaceId);
            position.ifPresent(p -> {
                closeGap(c, "shortcut_items", "group_id", groupId, p);
                try {
                    Sql.update(c, "UPDATE shortcut_groups SET updated_at = now() WHERE id = ?", groupId);
                } catch (SQLException e) {
                    throw Sql.translate(e);
                }
            });
            return position.isPresent();
        });
    }
}
