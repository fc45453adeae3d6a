package dev.atrium.memories.internal;

import dev.atrium.kernel.api.Sql;
import dev.atrium.search.api.IndexSource;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Memories for workspace search: followed by {@code (updated_at, id)}, which every write sets. */
@Component(service = IndexSource.class)
public class MemoryIndexSource implements IndexSource {

    private final Sql sql;

    @Activate
    public MemoryIndexSource(@Reference DataSource dataSource, @Reference MemoryStore store) {
        this.sql = new Sql(dataSource); // the store's reference: its migrations ran
    }

    @Override
    public String kind() {
        return "memory";
    }

    @Override
    public List<Item> changes(Instant since, String afterId, int limit) {
        return sql.list(
                "SELECT id, space_id, content, updated_at FROM memories WHERE (updated_at, id) > (?, ?)"
                        + " ORDER BY updated_at, id LIMIT ?",
                MemoryIndexSource::item,
                Timestamp.from(since),
                afterId,
                limit);
    }

    @Override
    public List<Item> inSpace(String spaceId, String afterId, int limit) {
        return sql.list(
                "SELECT id, space_id, content, updated_at FROM memories WHERE space_id = ? AND id > ? ORDER BY id LIMIT ?",
                MemoryIndexSource::item,
                spaceId,
                afterId,
                limit);
    }

    @Override
    public Map<String, Item> current(String spaceId, Collection<String> ids) {
        Map<String, Item> out = new LinkedHashMap<>();
        for (Item item : sql.list(
                "SELECT id, space_id, content, updated_at FROM memories WHERE space_id = ? AND id = ANY (?)",
                MemoryIndexSource::item,
                spaceId,
                ids.toArray(String[]::new))) {
            out.put(item.id(), item);
        }
        return out;
    }

    private static Item item(ResultSet rs) throws SQLException {
        return new Item(
                rs.getString("id"),
                rs.getString("space_id"),
                null,
                null,
                rs.getString("content"),
                rs.getTimestamp("updated_at").toInstant());
    }
}
