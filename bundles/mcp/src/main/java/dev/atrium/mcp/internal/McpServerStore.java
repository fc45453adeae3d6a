package dev.atrium.mcp.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
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

/** The mcp_servers table, which this bundle owns. It knows workspaces only by id; ownership is the kernel's. */
@Component(service = McpServerStore.class)
public class McpServerStore {

    static final ObjectMapper JSON = JsonMappers.create();
    private static final String COLUMNS =
            "id, space_id, name, url, transport, enabled, tools, tools_listed_at, created_at, updated_at, managed_by,"
                    + " EXISTS (SELECT 1 FROM mcp_oauth o WHERE o.server_id = mcp_servers.id AND o.access_token IS NOT NULL) AS authorized";

    private final Sql sql;

    @Activate
    public McpServerStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    /** A registered server; {@code tools} is the list as last read from it (null before the first listing). */
    public record Server(
            String id,
            String spaceId,
            String name,
            String url,
            String transport,
            boolean enabled,
            JsonNode tools,
            String toolsListedAt,
            String createdAt,
            String updatedAt,
            boolean authorized,
            String managedBy) {
        static Server of(ResultSet rs) throws SQLException {
            String tools = rs.getString("tools");
            JsonNode parsed;
            try {
                parsed = tools == null ? null : JSON.readTree(tools);
            } catch (java.io.IOException e) {
                parsed = null;
            }
            java.sql.Timestamp listed = rs.getTimestamp("tools_listed_at");
            return new Server(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("name"),
                    rs.getString("url"),
                    rs.getString("transport"),
                    rs.getBoolean("enabled"),
                    parsed,
                    listed == null ? null : listed.toInstant().toString(),
                    rs.getTimestamp("created_at").toInstant().toString(),
                    rs.getTimestamp("updated_at").toInstant().toString(),
                    rs.getBoolean("authorized"),
                    rs.getString("managed_by"));
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("name", name);
            m.put("url", url);
            m.put("transport", transport);
            m.put("enabled", enabled);
            m.put("tool_count", tools == null ? null : tools.size());
            m.put("tools_listed_at", toolsListedAt);
            m.put("authorized", authorized);
            m.put("managed_by", managedBy);
            m.put("created_at", createdAt);
            m.put("updated_at", updatedAt);
            return m;
        }
    }

    public Server create(String spaceId, String name, String url, String transport, boolean enabled) {
        return create(spaceId, name, url, transport, enabled, null);
    }

    /** A server {@code managedBy} registered (null: the owner's own). */
    public Server create(String spaceId, String name, String url, String transport, boolean enabled, String managedBy) {
        return one(
                        "INSERT INTO mcp_servers (id, space_id, name, url, transport, enabled, managed_by)"
                                + " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS,
                        Ids.id("mcp"),
                        spaceId,
                        name,
                        url,
                        transport,
                        enabled,
                        managedBy)
                .orElseThrow();
    }

    public Optional<Server> byName(String spaceId, String name) {
        return one("SELECT " + COLUMNS + " FROM mcp_servers WHERE space_id = ? AND name = ?", spaceId, name);
    }

    public Optional<Server> get(String id) {
        return one("SELECT " + COLUMNS + " FROM mcp_servers WHERE id = ?", id);
    }

    public List<Server> list(String spaceId, int limit, int offset) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM mcp_servers WHERE space_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
                Server::of,
                spaceId,
                limit,
                offset);
    }

    public int count(String spaceId) {
        return (int) sql.count("SELECT count(*) FROM mcp_servers WHERE space_id = ?", spaceId);
    }

    /** The workspace's enabled servers, for its runs. */
    public List<Server> enabled(String spaceId) {
        return sql.list(
                "SELECT " + COLUMNS
                        + " FROM mcp_servers WHERE space_id = ? AND enabled ORDER BY created_at, id LIMIT 50",
                Server::of,
                spaceId);
    }

    /** Changes what is given (null keeps it); a new URL or transport forgets the tools listed from the old one. */
    public Optional<Server> update(String id, String name, String url, String transport, Boolean enabled) {
        return one(
                "UPDATE mcp_servers SET name = coalesce(?, name), url = coalesce(?, url), transport = coalesce(?, transport),"
                        + " enabled = coalesce(?, enabled),"
                        + " tools = CASE WHEN coalesce(?, url) <> url OR coalesce(?, transport) <> transport THEN NULL ELSE tools END,"
                        + " tools_listed_at = CASE WHEN coalesce(?, url) <> url OR coalesce(?, transport) <> transport THEN NULL ELSE tools_listed_at END,"
                        + " updated_at = now() WHERE id = ? RETURNING " + COLUMNS,
                name,
                url,
                transport,
                enabled,
                url,
                transport,
                url,
                transport,
                id);
    }

    /** Remembers the tools just listed from the server at {@code url}, unless the server was pointed elsewhere meanwhile. */
    public void rememberTools(String id, String url, String transport, JsonNode tools) {
        sql.update(
                "UPDATE mcp_servers SET tools = ?::jsonb, tools_listed_at = now() WHERE id = ? AND url = ? AND transport = ?",
                tools.toString(),
                id,
                url,
                transport);
    }

    public boolean delete(String id) {
        return sql.update("DELETE FROM mcp_servers WHERE id = ?", id) == 1;
    }

    private Optional<Server> one(String statement, Object... args) {
        return sql.one(statement, Server::of, args);
    }
}
