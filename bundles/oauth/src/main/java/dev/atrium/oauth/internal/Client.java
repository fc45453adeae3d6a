package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A registered OAuth client. A public client ({@code token_endpoint_auth_method=none}) has no secret and must use PKCE. */
record Client(
        String clientId,
        byte[] secretHash,
        String ownerPrincipalId,
        String name,
        List<String> redirectUris,
        Set<String> grantTypes,
        Set<String> scopes,
        String authMethod,
        String clientUri,
        String logoUri,
        Instant createdAt,
        Instant updatedAt,
        List<String> postLogoutRedirectUris,
        byte[] previousSecretHash,
        Instant previousSecretExpiresAt,
        String tosUri,
        String policyUri) {

    static final String COLUMNS =
            "client_id, secret_hash, owner_principal_id, client_name, redirect_uris, grant_types, scopes, "
                    + "token_endpoint_auth_method, client_uri, logo_uri, created_at, updated_at, post_logout_redirect_uris, "
                    + "previous_secret_hash, previous_secret_expires_at, tos_uri, policy_uri";

    static Client of(ResultSet rs) throws SQLException {
        List<String> uris = lines(rs.getString("redirect_uris"));
        return new Client(
                rs.getString("client_id"),
                rs.getBytes("secret_hash"),
                rs.getString("owner_principal_id"),
                rs.getString("client_name"),
                uris,
                ScopeSet.column(rs.getString("grant_types")),
                ScopeSet.column(rs.getString("scopes")),
                rs.getString("token_endpoint_auth_method"),
                rs.getString("client_uri"),
                rs.getString("logo_uri"),
                Sql.instant(rs, "created_at"),
                Sql.instant(rs, "updated_at"),
                lines(rs.getString("post_logout_redirect_uris")),
                rs.getBytes("previous_secret_hash"),
                Sql.instant(rs, "previous_secret_expires_at"),
                rs.getString("tos_uri"),
                rs.getString("policy_uri"));
    }

    private static List<String> lines(String column) {
        List<String> out = new ArrayList<>();
        if (column != null) {
            for (String u : column.split("\n")) {
                if (!u.isEmpty()) {
                    out.add(u);
                }
            }
        }
        return out;
    }

    boolean isPublic() {
        return "none".equals(authMethod);
    }

    /**
     * Whether {@code secret} authenticates this confidential client at {@code now}: its secret, or the one it had before
     * its last rotation until that one's grace ends.
     */
    boolean secretMatches(String secret, Instant now) {
        if (secret == null) {
            return false;
        }
        byte[] given = Digests.sha256(secret);
        boolean current = Digests.constantTimeEquals(secretHash, given);
        boolean previous = previousSecretExpiresAt != null
                && now.isBefore(previousSecretExpiresAt)
                && Digests.constantTimeEquals(previousSecretHash, given);
        return current || previous;
    }

    /** RFC 7591 client metadata; never the secret (only the create response carries it). */
    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("client_id", clientId);
        m.put("client_id_issued_at", createdAt.getEpochSecond());
        m.put("client_name", name);
        m.put("redirect_uris", redirectUris);
        m.put("post_logout_redirect_uris", postLogoutRedirectUris);
        m.put("grant_types", grantTypes);
        m.put("response_types", grantTypes.contains("authorization_code") ? List.of("code") : List.of());
        m.put("scope", ScopeSet.join(scopes));
        m.put("token_endpoint_auth_method", authMethod);
        m.put("client_uri", clientUri);
        m.put("logo_uri", logoUri);
        m.put("tos_uri", tosUri);
        m.put("policy_uri", policyUri);
        m.put("created_at", createdAt.toString());
        m.put("updated_at", updatedAt.toString());
        return m;
    }
}
