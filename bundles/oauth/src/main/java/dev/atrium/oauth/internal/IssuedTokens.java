package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.Sql;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The issued tokens in use: introspection, revocation (of one token or of a whole family) and bearer lookups for
 * /api, with the introspection cache that revocation on this instance clears.
 */
@Component(service = IssuedTokens.class)
public class IssuedTokens {

    private final Sql sql;
    private final PrincipalDirectory principals;
    private final OAuthAuditLog audit;

    @Activate
    public IssuedTokens(
            @Reference DataSource dataSource,
            @Reference PrincipalDirectory principals,
            @Reference OAuthAuditLog audit) {
        this.sql = new Sql(dataSource);
        this.principals = principals;
        this.audit = audit;
    }

    /**
     * Introspection answers for access tokens come from a cache of {@link #INTROSPECTION_CACHE}: resource servers
     * ask about the same token again and again. Revocation on this instance drops the entries at once; another
     * instance's revocation is seen within that time. Expiry is checked on every answer.
     */
    private static final Duration INTROSPECTION_CACHE = Duration.ofSeconds(2);

    private final java.util.concurrent.ConcurrentHashMap<String, CachedToken> tokenCache =
            new java.util.concurrent.ConcurrentHashMap<>();

    private record CachedToken(TokenRow row, Instant at) {}

    private Optional<TokenRow> introspected(String token) {
        byte[] hash = Digests.sha256(token);
        String key = Digests.base64Url(hash);
        CachedToken cached = tokenCache.get(key);
        if (cached != null && cached.at().plus(INTROSPECTION_CACHE).isAfter(Instant.now())) {
            return Optional.of(cached.row());
        }
        Optional<TokenRow> row = sql.one(
                "SELECT " + TokenRow.COLUMNS + " FROM oauth_tokens WHERE token_hash = ?", TokenRow::of, (Object) hash);
        if (row.isPresent()
                && row.get().principalId() != null
                && !principalActive(row.get().principalId())) {
            // a suspended Principal's tokens are not active, here as on /api
            return Optional.empty();
        }
        if (row.isPresent() && "access".equals(row.get().kind()) && row.get().active()) {
            if (tokenCache.size() > 50_000) {
                tokenCache.clear();
            }
            tokenCache.put(key, new CachedToken(row.get(), Instant.now()));
        }
        return row;
    }

    void forgetCached(java.util.function.Predicate<TokenRow> which) {
        tokenCache.values().removeIf(c -> which.test(c.row()));
    }

    Map<String, Object> introspect(String issuer, Client client, String token) {
        Optional<TokenRow> row = token == null ? Optional.empty() : introspected(token);
        if (row.isEmpty() || !row.get().active() || !row.get().clientId().equals(client.clientId())) {
            return Map.of("active", false);
        }
        TokenRow t = row.get();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("active", true);
        m.put("scope", ScopeSet.join(t.scopes()));
        m.put("client_id", t.clientId());
        m.put("token_type", "access".equals(t.kind()) ? "Bearer" : "refresh_token");
        m.put("exp", t.expiresAt().getEpochSecond());
        m.put("iat", t.createdAt().getEpochSecond());
        if (t.principalId() != null) {
            m.put("sub", t.principalId());
        }
        m.put("aud", t.clientId());
        m.put("iss", issuer);
        return m;
    }

    /** RFC 7009: revokes the client's own token; a refresh token takes its whole family along. Unknown tokens are fine. */
    void revoke(Client client, String token) {
        if (token == null) {
            throw OAuthError.invalidRequest("token is required");
        }
        Optional<TokenRow> row =
                sql.one("SELECT " + TokenRow.COLUMNS + " FROM oauth_tokens WHERE token_hash = ?", TokenRow::of, (Object)
                        Digests.sha256(token));
        if (row.isEmpty() || !row.get().clientId().equals(client.clientId())) {
            return;
        }
        if ("refresh".equals(row.get().kind())) {
            revokeFamily(row.get().familyId());
        } else {
            sql.update(
                    "UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = ? AND revoked_at IS NULL",
                    (Object) Digests.sha256(token));
            tokenCache.remove(Digests.base64Url(Digests.sha256(token)));
            kernelForgets();
        }
        audit.audit(
                row.get().principalId(),
                client.clientId(),
                "token_revoked",
                row.get().kind());
    }

    /** Optional: revocations must not wait for the kernel, and the kernel's authenticator uses this bundle's verifier. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile Authenticator authenticator;

    /** This instance's kernel forgets what it kept about callers now; the others hear the database's trigger. */
    void kernelForgets() {
        Authenticator a = authenticator;
        if (a != null) {
            a.accessChanged();
        }
    }

    record Bearer(String principalId, String clientId, Set<String> scopes, java.time.Instant expiresAt) {}

    /** An active access token's grant, or empty. */
    Optional<Bearer> bearer(String token) {
        if (token == null || !token.startsWith("ato_") || token.length() > 200) {
            return Optional.empty();
        }
        return sql.one(
                "SELECT principal_id, client_id, scopes, expires_at FROM oauth_tokens WHERE token_hash = ? AND kind = 'access' "
                        + "AND revoked_at IS NULL AND expires_at > now()",
                rs -> new Bearer(
                        rs.getString("principal_id"),
                        rs.getString("client_id"),
                        ScopeSet.column(rs.getString("scopes")),
                        Sql.instant(rs, "expires_at")),
                (Object) Digests.sha256(token));
    }

    int revokeFamily(String familyId) {
        forgetCached(t -> t.familyId().equals(familyId));
        int revoked = sql.update(
                "UPDATE oauth_tokens SET revoked_at = now() WHERE family_id = ? AND revoked_at IS NULL", familyId);
        kernelForgets();
        return revoked;
    }

    /** Revokes every live token of the Principal, of every client (the operator's revoke-tokens); how many. */
    int revokeAllOf(String principalId) {
        forgetCached(t -> principalId.equals(t.principalId()));
        int revoked = sql.update(
                "UPDATE oauth_tokens SET revoked_at = now() WHERE principal_id = ? AND revoked_at IS NULL "
                        + "AND expires_at > now()",
                principalId);
        kernelForgets();
        if (revoked > 0) {
            audit.audit(principalId, null, "tokens_revoked_by_operator", "revoked " + revoked + " tokens");
        }
        return revoked;
    }

    boolean principalActive(String principalId) {
        return principals.get(principalId).map(PrincipalDirectory.Entry::active).orElse(false);
    }
}
