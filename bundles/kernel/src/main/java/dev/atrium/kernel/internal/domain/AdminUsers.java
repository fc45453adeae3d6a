package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.internal.audit.KeysetCursor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The operator's list of users: every Principal with its provider, status, last sign-in and live token count. */
@Component(service = AdminUsers.class)
public class AdminUsers {

    private static final String SELECT =
            "SELECT p.id, p.username, p.name, p.email, p.provider, p.status, p.created_at, "
                    + "p.last_sign_in_at, (SELECT count(*) FROM personal_access_tokens t WHERE t.principal_id = p.id "
                    + "AND (t.expires_at IS NULL OR t.expires_at > now())) AS token_count FROM principals p";

    private final Sql sql;

    @Activate
    public AdminUsers(@Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.sql = new Sql(dataSource);
    }

    /** A user as the operator sees it; {@code tokenCount} counts live personal access tokens. */
    public record User(
            String id,
            String username,
            String name,
            String email,
            String provider,
            String status,
            Instant createdAt,
            Instant lastSignInAt,
            long tokenCount) {
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("username", username);
            m.put("name", name);
            m.put("email", email);
            m.put("provider", provider);
            m.put("status", status);
            m.put("created_at", createdAt.toString());
            m.put("last_sign_in_at", lastSignInAt == null ? null : lastSignInAt.toString());
            m.put("token_count", tokenCount);
            return m;
        }
    }

    public record Page(List<User> users, String nextCursor) {}

    public Optional<User> byId(String principalId) {
        return sql.one(SELECT + " WHERE p.id = ?", AdminUsers::user, principalId);
    }

    /**
     * Users newest first, after {@code cursor}: those whose username, name or email contains {@code query}
     * (case-insensitively) and whose status is {@code status}, each when given.
     */
    public Page list(String query, String status, KeysetCursor cursor, int limit) {
        StringBuilder where = new StringBuilder(" WHERE true");
        List<Object> args = new ArrayList<>();
        if (query != null) {
            String like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
            where.append(" AND (p.username ILIKE ? OR p.name ILIKE ? OR p.email ILIKE ?)");
            args.add(like);
            args.add(like);
            args.add(like);
        }
        if (status != null) {
            where.append(" AND p.status = ?");
            args.add(status);
        }
        if (cursor != null) {
            where.append(" AND (p.created_at, p.id) < (?, ?)");
            args.add(cursor.at());
            args.add(cursor.id());
        }
        args.add(limit + 1);
        List<User> rows = sql.list(
                SELECT + where + " ORDER BY p.created_at DESC, p.id DESC LIMIT ?", AdminUsers::user, args.toArray());
        String next = null;
        if (rows.size() > limit) {
            rows = rows.subList(0, limit);
            User last = rows.get(limit - 1);
            next = new KeysetCursor(last.createdAt(), last.id()).encode();
        }
        return new Page(rows, next);
    }

    private static User user(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new User(
                rs.getString("id"),
                rs.getString("username"),
                rs.getString("name"),
                rs.getString("email"),
                rs.getString("provider"),
                rs.getString("status"),
                Sql.instant(rs, "created_at"),
                Sql.instant(rs, "last_sign_in_at"),
                rs.getLong("token_count"));
    }
}
