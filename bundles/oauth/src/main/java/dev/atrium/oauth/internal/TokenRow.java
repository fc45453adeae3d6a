package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Sql;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Set;

/** One row of {@code oauth_tokens}: an access or refresh token, by its hash. */
record TokenRow(
        String kind,
        String clientId,
        String principalId,
        Set<String> scopes,
        String familyId,
        Instant expiresAt,
        Instant usedAt,
        Instant revokedAt,
        Instant createdAt,
        Authentication authentication) {

    static final String COLUMNS =
            "kind, client_id, principal_id, scopes, family_id, expires_at, used_at, revoked_at, created_at, auth_time, amr";

    boolean active() {
        return revokedAt == null && expiresAt.isAfter(Instant.now()) && (!"refresh".equals(kind) || usedAt == null);
    }

    static TokenRow of(java.sql.ResultSet rs) throws SQLException {
        return new TokenRow(
                rs.getString("kind"),
                rs.getString("client_id"),
                rs.getString("principal_id"),
                ScopeSet.column(rs.getString("scopes")),
                rs.getString("family_id"),
                Sql.instant(rs, "expires_at"),
                Sql.instant(rs, "used_at"),
                Sql.instant(rs, "revoked_at"),
                Sql.instant(rs, "created_at"),
                Authentication.fromColumns(Sql.instant(rs, "auth_time"), rs.getString("amr")));
    }
}
