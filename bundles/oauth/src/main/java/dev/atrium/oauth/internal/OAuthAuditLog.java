package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The OAuth audit log: what happened to which client on whose behalf, for the user's own view. */
@Component(service = OAuthAuditLog.class)
public class OAuthAuditLog {

    private final Sql sql;

    @Activate
    public OAuthAuditLog(@Reference DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    List<Map<String, Object>> auditLogs(String principalId, int limit, int offset) {
        return sql.list(
                "SELECT id, client_id, event, detail, created_at FROM oauth_audit_logs WHERE principal_id = ? "
                        + "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                rs -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("id", rs.getString("id"));
                    m.put("client_id", rs.getString("client_id"));
                    m.put("event", rs.getString("event"));
                    m.put("detail", rs.getString("detail"));
                    m.put("created_at", Sql.instant(rs, "created_at").toString());
                    return m;
                },
                principalId,
                limit,
                offset);
    }

    int auditCount(String principalId) {
        return sql.one("SELECT count(*) FROM oauth_audit_logs WHERE principal_id = ?", rs -> rs.getInt(1), principalId)
                .orElse(0);
    }

    void audit(String principalId, String clientId, String event, String detail) {
        sql.run(c -> {
            auditIn(c, principalId, clientId, event, detail);
            return null;
        });
    }

    static void auditIn(Connection c, String principalId, String clientId, String event, String detail)
            throws SQLException {
        Sql.update(
                c,
                "INSERT INTO oauth_audit_logs (id, principal_id, client_id, event, detail) VALUES (?, ?, ?, ?, ?)",
                Ids.random("oal_", 20),
                principalId,
                clientId,
                event,
                detail);
    }
}
