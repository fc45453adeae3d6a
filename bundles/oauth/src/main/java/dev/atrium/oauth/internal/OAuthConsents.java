package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The users' consents: granted per client as the union of approved scopes, listed and withdrawn by the user. */
@Component(service = OAuthConsents.class)
public class OAuthConsents {

    private final Sql sql;
    private final IssuedTokens tokens;
    private final OAuthAuditLog audit;

    @Activate
    public OAuthConsents(
            @Reference DataSource dataSource, @Reference IssuedTokens tokens, @Reference OAuthAuditLog audit) {
        this.sql = new Sql(dataSource);
        this.tokens = tokens;
        this.audit = audit;
    }

    List<Map<String, Object>> consents(String principalId) {
        return sql.list(
                "SELECT k.client_id, k.scopes, k.created_at, k.updated_at, c.client_name, c.client_uri, c.logo_uri "
                        + "FROM oauth_consents k JOIN oauth_clients c ON c.client_id = k.client_id WHERE k.principal_id = ? "
                        + "ORDER BY k.updated_at DESC, k.client_id",
                rs -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("client_id", rs.getString("client_id"));
                    m.put("client_name", rs.getString("client_name"));
                    m.put("client_uri", rs.getString("client_uri"));
                    m.put("logo_uri", rs.getString("logo_uri"));
                    m.put("scopes", new ArrayList<>(ScopeSet.column(rs.getString("scopes"))));
                    m.put("created_at", Sql.instant(rs, "created_at").toString());
                    m.put("updated_at", Sql.instant(rs, "updated_at").toString());
                    return m;
                },
                principalId);
    }

    /** Withdraws the consent and revokes every token the client holds for this user; false when there was none. */
    boolean revokeConsent(String principalId, String clientId) {
        int[] counts = sql.tx(c -> new int[] {
            Sql.update(c, "DELETE FROM oauth_consents WHERE principal_id = ? AND client_id = ?", principalId, clientId),
            Sql.update(
                    c,
                    "UPDATE oauth_tokens SET revoked_at = now() WHERE principal_id = ? AND client_id = ? AND revoked_at IS NULL",
                    principalId,
                    clientId)
        });
        tokens.forgetCached(t -> principalId.equals(t.principalId()) && clientId.equals(t.clientId()));
        tokens.kernelForgets();
        if (counts[0] == 0 && counts[1] == 0) {
            return false;
        }
        audit.audit(principalId, clientId, "consent_revoked", "revoked " + counts[1] + " tokens");
        return true;
    }

    /** Whether the user's stored consent for the client covers every one of {@code scopes}. */
    boolean covers(String principalId, String clientId, Set<String> scopes) {
        return sql.one(
                        "SELECT scopes FROM oauth_consents WHERE principal_id = ? AND client_id = ?",
                        rs -> ScopeSet.column(rs.getString(1)),
                        principalId,
                        clientId)
                .map(granted -> granted.containsAll(scopes))
                .orElse(false);
    }

    /** Adds {@code scopes} to the user's consent for the client, in the caller's transaction. */
    void consent(Connection c, String principalId, String clientId, Set<String> scopes) throws SQLException {
        Set<String> all = new LinkedHashSet<>(Sql.one(
                        c,
                        "SELECT scopes FROM oauth_consents WHERE principal_id = ? AND client_id = ?",
                        rs -> ScopeSet.column(rs.getString(1)),
                        principalId,
                        clientId)
                .orElse(Set.of()));
        boolean changed = all.addAll(scopes);
        Sql.update(
                c,
                "INSERT INTO oauth_consents (principal_id, client_id, scopes) VALUES (?, ?, ?) "
                        + "ON CONFLICT (principal_id, client_id) DO UPDATE SET scopes = excluded.scopes, updated_at = now()",
                principalId,
                clientId,
                ScopeSet.join(all));
        if (changed) {
            OAuthAuditLog.auditIn(c, principalId, clientId, "consent_granted", ScopeSet.join(all));
        }
    }
}
