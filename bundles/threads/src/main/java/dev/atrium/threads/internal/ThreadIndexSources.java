package dev.atrium.threads.internal;

import dev.atrium.kernel.api.Sql;
import dev.atrium.search.api.IndexSource;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Threads (their titles) and their messages for workspace search. Threads are followed by {@code (updated_at, id)},
 * messages, which never change, by {@code (created_at, id)}; a message's parent is {@code thread:<id>}.
 */
final class ThreadIndexSources {

    private ThreadIndexSources() {}

    /** Thread titles. */
    @org.osgi.service.component.annotations.Component(service = IndexSource.class)
    public static class Threads implements IndexSource {
        private final Sql sql;

        @org.osgi.service.component.annotations.Activate
        public Threads(
                @org.osgi.service.component.annotations.Reference DataSource dataSource,
                @org.osgi.service.component.annotations.Reference ThreadStore store) {
            this.sql = new Sql(dataSource);
        }

        @Override
        public String kind() {
            return "thread";
        }

        @Override
        public List<Item> changes(Instant since, String afterId, int limit) {
            return sql.list(
                    "SELECT id, space_id, title, updated_at FROM threads WHERE (updated_at, id) > (?, ?)"
                            + " ORDER BY updated_at, id LIMIT ?",
                    Threads::item,
                    Timestamp.from(since),
                    afterId,
                    limit);
        }

        @Override
        public List<Item> inSpace(String spaceId, String afterId, int limit) {
            return sql.list(
                    "SELECT id, space_id, title, updated_at FROM threads WHERE space_id = ? AND id > ? ORDER BY id"
                            + " LIMIT ?",
                    Threads::item,
                    spaceId,
                    afterId,
                    limit);
        }

        @Override
        public Map<String, Item> current(String spaceId, Collection<String> ids) {
            Map<String, Item> out = new LinkedHashMap<>();
            for (Item i : sql.list(
                    "SELECT id, space_id, title, updated_at FROM threads WHERE space_id = ? AND id = ANY (?)",
                    Threads::item,
                    spaceId,
                    ids.toArray(String[]::new))) {
                out.put(i.id(), i);
            }
            return out;
        }

        /** A thread's title is both its name and the text searched. */
        private static Item item(java.sql.ResultSet rs) throws java.sql.SQLException {
            return new Item(
                    rs.getString(1),
                    rs.getString(2),
                    null,
                    rs.getString(3),
                    rs.getString(3),
                    rs.getTimestamp(4).toInstant());
        }
    }

    /** Messages, each with its thread as parent. */
    @org.osgi.service.component.annotations.Component(service = IndexSource.class)
    public static class Messages implements IndexSource {
        private static final String SELECT = "SELECT m.id, t.space_id, m.thread_id, m.content, m.created_at"
                + " FROM thread_messages m JOIN threads t ON t.id = m.thread_id ";
        private final Sql sql;

        @org.osgi.service.component.annotations.Activate
        public Messages(
                @org.osgi.service.component.annotations.Reference DataSource dataSource,
                @org.osgi.service.component.annotations.Reference ThreadStore store) {
            this.sql = new Sql(dataSource);
        }

        @Override
        public String kind() {
            return "message";
        }

        @Override
        public List<Item> changes(Instant since, String afterId, int limit) {
            return sql.list(
                    SELECT + "WHERE (m.created_at, m.id) > (?, ?) ORDER BY m.created_at, m.id LIMIT ?",
                    Messages::item,
                    Timestamp.from(since),
                    afterId,
                    limit);
        }

        @Override
        public List<Item> inSpace(String spaceId, String afterId, int limit) {
            return sql.list(
                    SELECT + "WHERE t.space_id = ? AND m.id > ? ORDER BY m.id LIMIT ?",
                    Messages::item,
                    spaceId,
                    afterId,
                    limit);
        }

        @Override
        public Map<String, Item> current(String spaceId, Collection<String> ids) {
            Map<String, Item> out = new LinkedHashMap<>();
            for (Item i : sql.list(
                    SELECT + "WHERE t.space_id = ? AND m.id = ANY (?)",
                    Messages::item,
                    spaceId,
                    ids.toArray(String[]::new))) {
                out.put(i.id(), i);
            }
            return out;
        }

        private static Item item(java.sql.ResultSet rs) throws java.sql.SQLException {
            return new Item(
                    rs.getString(1),
                    rs.getString(2),
                    "thread:" + rs.getString(3),
                    null,
                    rs.getString(4),
                    rs.getTimestamp(5).toInstant());
        }
    }
}
