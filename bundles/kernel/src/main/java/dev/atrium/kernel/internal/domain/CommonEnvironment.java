package dev.atrium.kernel.internal.domain;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;

/** A workspace's common environment variables, which its services link to. Secret values are never read back. */
@Component(service = CommonEnvironment.class)
public class CommonEnvironment {

    private final Sql sql;

    @Activate
    public CommonEnvironment(@Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.sql = new Sql(dataSource);
    }

    public record Variable(String name, String value, boolean secret, Instant createdAt, Instant updatedAt) {
        static Variable of(ResultSet rs) throws SQLException {
            return new Variable(rs.getString("name"), rs.getString("value"), rs.getBoolean("secret"),
                    Sql.instant(rs, "created_at"), Sql.instant(rs, "updated_at"));
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("value", secret ? null : value);
            m.put("secret", secret);
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            return m;
        }
    }

    public List<Variable> list(String workspaceId) {
        return sql.list("SELECT name, value, secret, created_at, updated_at FROM workspace_common_env WHERE workspace_id = ? "
                + "ORDER BY name", Variable::of, workspaceId);
    }

    public Variable put(String workspaceId, String name, String value, boolean secret) {
        return sql.one("INSERT INTO workspace_common_env (workspace_id, name, value, secret) VALUES (?, ?, ?, ?) "
                + "ON CONFLICT (workspace_id, name) DO UPDATE SET value = excluded.value, secret = excluded.secret, updated_at = now() "
                + "RETURNING name, value, secret, created_at, updated_at", Variable::of, workspaceId, name, value, secret).orElseThrow();
    }

    public boolean delete(String workspaceId, String name) {
        return sql.update("DELETE FROM workspace_common_env WHERE workspace_id = ? AND name = ?", workspaceId, name) == 1;
    }
}
