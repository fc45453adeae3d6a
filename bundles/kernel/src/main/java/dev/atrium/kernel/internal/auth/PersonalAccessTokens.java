package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Personal access tokens {@code atp_…}. Only the SHA-256 of a token is stored; the token itself is
 * shown once, in the create response. What a token proves is kept by the {@link AccessCache} no longer than the
 * token lives, and forgotten on every instance when a token is deleted or its Principal suspended.
 */
@Component(service = PersonalAccessTokens.class)
public class PersonalAccessTokens {

    public static final String PREFIX = "atp";
    private static final int PREFIX_SHOWN = 12;

    private final Sql sql;
    private final AccessCache access;

    @Activate
    public PersonalAccessTokens(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrated, @Reference AccessCache access) {
        this.sql = new Sql(dataSource);
        this.access = access;
    }

    public record Token(
            String id, String name, String scopes, String tokenPrefix, Instant expiresAt, Instant createdAt) {
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("name", name);
            m.put("scopes", scopes);
            m.put("token_prefix", tokenPrefix);
            m.put("expires_at", expiresAt == null ? null : expiresAt.toString());
            m.put("created_at", createdAt.toString());
            return m;
        }
    }

    public record Created(Token token, String secret) {
        public Map<String, Object> toJson() {
            Map<String, Object> m = token.toJson();
            m.put("token", secret);
            return m;
        }
    }

    public Created create(String principalId, String name, Set<String> scopes, Instant expiresAt) {
        if (expiresAt != null && !expiresAt.isAfter(Instant.now())) {
            throw ApiException.badRequest("expiresAt must be in the future");
        }
        String secret = Ids.random(PREFIX + "_", 40);
        String id = Ids.id("pat");
        String scopeColumn = String.join(" ", scopes);
        Token token = sql.one(
                        "INSERT INTO personal_access_tokens (id, principal_id, name, token_hash, token_prefix, scopes, expires_at) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, name, scopes, token_prefix, expires_at, created_at",
                        PersonalAccessTokens::token,
                        id,
                        principalId,
                        name,
                        Digests.sha256(secret),
                        secret.substring(0, PREFIX_SHOWN),
                        scopeColumn,
                        expiresAt)
                .orElseThrow();
        return new Created(token, secret);
    }

    public List<Token> list(String principalId) {
        return sql.list(
                "SELECT id, name, scopes, token_prefix, expires_at, created_at FROM personal_access_tokens "
                        + "WHERE principal_id = ? ORDER BY created_at, id",
                PersonalAccessTokens::token,
                principalId);
    }

    public boolean delete(String principalId, String id) {
        boolean deleted =
                sql.update("DELETE FROM personal_access_tokens WHERE id = ? AND principal_id = ?", id, principalId)
                        == 1;
        access.forgetAll();
        return deleted;
    }

    /** Deletes every token of the Principal; how many there were. */
    public int deleteAll(String principalId) {
        int deleted = sql.update("DELETE FROM personal_access_tokens WHERE principal_id = ?", principalId);
        access.forgetAll();
        return deleted;
    }

    /** Forgets what this instance keeps about callers (a change of another kind of credential was just made). */
    public void forgetAccess() {
        access.forgetAll();
    }

    /** The result of presenting a token. */
    public sealed interface Outcome permits Valid, Unknown, Suspended {}

    /** A valid token's caller, and when the token expires (null: never). */
    public record Valid(dev.atrium.kernel.api.Caller caller, Instant expiresAt) implements Outcome {}

    public record Unknown() implements Outcome {}

    public record Suspended() implements Outcome {}

    public Outcome authenticate(String secret) {
        if (!secret.startsWith(PREFIX + "_") || secret.length() > 200) {
            return new Unknown();
        }
        Optional<Outcome> found = sql.one(
                "SELECT t.id, t.principal_id, t.scopes, t.expires_at, p.status FROM personal_access_tokens t "
                        + "JOIN principals p ON p.id = t.principal_id "
                        + "WHERE t.token_hash = ? AND (t.expires_at IS NULL OR t.expires_at > now())",
                rs -> "active".equals(rs.getString("status"))
                        ? new Valid(
                                Mint.KERNEL.pat(
                                        rs.getString("principal_id"), Scopes.fromColumn(rs.getString("scopes"))),
                                Sql.instant(rs, "expires_at"))
                        : new Suspended(),
                (Object) Digests.sha256(secret));
        return found.orElseGet(Unknown::new);
    }

    private static Token token(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new Token(
                rs.getString("id"),
                rs.getString("name"),
                rs.getString("scopes"),
                rs.getString("token_prefix"),
                Sql.instant(rs, "expires_at"),
                Sql.instant(rs, "created_at"));
    }
}
