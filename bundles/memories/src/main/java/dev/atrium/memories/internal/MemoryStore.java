package dev.atrium.memories.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
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

/** The memories table, which this bundle owns. It knows workspaces only by id; ownership is the kernel's. */
@Component(service = MemoryStore.class)
public class MemoryStore {

    private static final String COLUMNS = "id, space_id, content, created_at, updated_at";

    private static final int PAGE = 500;

    private final Sql sql;

    @Activate
    public MemoryStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    public record Memory(String id, String spaceId, String content, String createdAt, String updatedAt) {
        static Memory of(ResultSet rs) throws SQLException {
            return new Memory(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("content"),
                    rs.getTimestamp("created_at").toInstant().toString(),
                    rs.getTimestamp("updated_at").toInstant().toString());
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("content", content);
            m.put("created_at", createdAt);
            m.put("updated_at", updatedAt);
            return m;
        }
    }

    public Memory create(String spaceId, String content) {
        return one(
                        "INSERT INTO memories (id, space_id, content) VALUES (?, ?, ?) RETURNING " + COLUMNS,
                        Ids.id("mem"),
                        spaceId,
                        content)
                .orElseThrow();
    }

    public Optional<Memory> get(String id) {
        return one("SELECT " + COLUMNS + " FROM memories WHERE id = ?", id);
    }

    public List<Memory> list(String spaceId, int limit, int offset) {
        return query(
                "SELECT " + COLUMNS
                        + " FROM memories WHERE space_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                spaceId,
                limit,
                offset);
    }

    public int count(String spaceId) {
        return (int) sql.count("SELECT count(*) FROM memories WHERE space_id = ?", spaceId);
    }

    /** Full-text search in PostgreSQL, best matches first; the query uses web-search syntax (words, "phrases", -not, or). */
    public List<Memory> search(String spaceId, String q, int limit, int offset) {
        return query(
                "SELECT " + COLUMNS + " FROM memories, websearch_to_tsquery('english', ?) query "
                        + "WHERE space_id = ? AND search @@ query ORDER BY ts_rank(search, query) DESC, created_at DESC, id LIMIT ? OFFSET ?",
                q,
                spaceId,
                limit,
                offset);
    }

    public Optional<Memory> update(String id, String content) {
        return one(
                "UPDATE memories SET content = ?, updated_at = now() WHERE id = ? RETURNING " + COLUMNS, content, id);
    }

    public boolean delete(String id) {
        return sql.update("DELETE FROM memories WHERE id = ?", id) == 1;
    }

    /** Every memory of a workspace, oldest first, read in one snapshot a page at a time; returns how many. */
    public long each(String spaceId, Sql.RowSink<Memory> sink) throws IOException {
        return sql.snapshotStreaming(c -> {
            long n = 0;
            Timestamp after = null;
            String afterId = "";
            while (true) {
                List<Memory> page = Sql.list(
                        c,
                        "SELECT " + COLUMNS
                                + " FROM memories WHERE space_id = ? AND (?::timestamptz IS NULL OR (created_at, id) > (?::timestamptz, ?)) "
                                + "ORDER BY created_at, id LIMIT " + PAGE,
                        Memory::of,
                        spaceId,
                        after,
                        after,
                        afterId);
                for (Memory m : page) {
                    sink.accept(m);
                    n++;
                }
                if (page.size() < PAGE) {
                    return n;
                }
                Memory last = page.get(page.size() - 1);
                after = Timestamp.from(Instant.parse(last.createdAt()));
                afterId = last.id();
            }
        });
    }

    /** A memory brought back from a workspace archive: a new id, its content and times as they were. */
    public Memory restore(String spaceId, String content, Instant createdAt, Instant updatedAt) {
        return one(
                        "INSERT INTO memories (id, space_id, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING "
                                + COLUMNS,
                        Ids.id("mem"),
                        spaceId,
                        content,
                        Timestamp.from(createdAt),
                        Timestamp.from(updatedAt))
                .orElseThrow();
    }

    /** Removes every memory of a workspace (an import that failed after this part). */
    public int deleteAll(String spaceId) {
        return sql.update("DELETE FROM memories WHERE space_id = ?", spaceId);
    }

    private Optional<Memory> one(String statement, Object... args) {
        return sql.one(statement, Memory::of, args);
    }

    private List<Memory> query(String statement, Object... args) {
        return sql.list(statement, Memory::of, args);
    }
}
