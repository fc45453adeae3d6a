package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.Sql;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The token endpoint's grants other than the device code (authorization code, refresh token, client credentials),
 * and issuing tokens (with the ID token for {@code openid}) for every grant.
 */
@Component(service = TokenGrants.class)
public class TokenGrants {

    private final Sql sql;
    private final SigningKeys keys;
    private final PrincipalDirectory principals;
    private final IssuedTokens tokens;
    private final OAuthAuditLog audit;

    @Activate
    public TokenGrants(
            @Reference DataSource dataSource,
            @Reference SigningKeys keys,
            @Reference PrincipalDirectory principals,
            @Reference IssuedTokens tokens,
            @Reference OAuthAuditLog audit) {
        this.sql = new Sql(dataSource);
        this.keys = keys;
        this.principals = principals;
        this.tokens = tokens;
        this.audit = audit;
    }

    private record CodeRow(
            String clientId,
            String principalId,
            String redirectUri,
            Set<String> scopes,
            String challenge,
            String nonce,
            String familyId,
            Instant expiresAt,
            Instant usedAt,
            Authentication authentication) {}

    Map<String, Object> codeGrant(String issuer, Client client, Map<String, String> p) {
        String code = required(p, "code");
        byte[] hash = Digests.sha256(code);
        // only the client the code was issued to can use it up: a leaked code in another client's hands burns nothing
        Optional<CodeRow> claimed = sql.one(
                "UPDATE oauth_codes SET used_at = now() WHERE code_hash = ? AND client_id = ? "
                        + "AND used_at IS NULL "
                        + "RETURNING client_id, principal_id, redirect_uri, scopes, code_challenge, nonce, family_id, expires_at, used_at, "
                        + "auth_time, amr",
                TokenGrants::codeRow,
                hash,
                client.clientId());
        if (claimed.isEmpty()) {
            Optional<CodeRow> used = sql.one(
                    "SELECT client_id, principal_id, redirect_uri, scopes, code_challenge, nonce, family_id, "
                            + "expires_at, used_at, auth_time, amr FROM oauth_codes WHERE code_hash = ?",
                    TokenGrants::codeRow,
                    (Object) hash);
            if (used.isPresent() && used.get().clientId().equals(client.clientId())) {
                int revoked = tokens.revokeFamily(used.get().familyId());
                audit.audit(
                        used.get().principalId(),
                        client.clientId(),
                        "code_reuse_detected",
                        "revoked " + revoked + " tokens");
            }
            throw OAuthError.invalidGrant("the authorization code is invalid, expired or already used");
        }
        CodeRow row = claimed.get();
        if (!row.clientId().equals(client.clientId())) {
            throw OAuthError.invalidGrant("the authorization code was issued to another client");
        }
        if (row.expiresAt().isBefore(Instant.now())) {
            throw OAuthError.invalidGrant("the authorization code has expired");
        }
        String redirectUri = p.get("redirect_uri");
        if ((row.redirectUri() != null && !row.redirectUri().equals(redirectUri))
                || (row.redirectUri() == null
                        && redirectUri != null
                        && !client.redirectUris().contains(redirectUri))) {
            throw OAuthError.invalidGrant("redirect_uri does not match the authorization request");
        }
        String verifier = p.get("code_verifier");
        if (row.challenge() != null) {
            if (verifier == null || !verifier.matches("[A-Za-z0-9._~-]{43,128}")) {
                throw OAuthError.invalidGrant("code_verifier is missing or malformed");
            }
            if (!Digests.constantTimeEquals(Digests.sha256Base64Url(verifier), row.challenge())) {
                throw OAuthError.invalidGrant("code_verifier does not match the code_challenge");
            }
        } else if (verifier != null) {
            throw OAuthError.invalidGrant("code_verifier sent for a request without code_challenge");
        }
        requireActive(row.principalId());
        // a refresh token only for a client registered for the refresh_token grant
        boolean refresh = client.grantTypes().contains("refresh_token");
        return issue(
                issuer,
                client,
                row.principalId(),
                row.scopes(),
                row.familyId(),
                refresh,
                row.nonce(),
                row.authentication(),
                "code_exchanged");
    }

    private static CodeRow codeRow(java.sql.ResultSet rs) throws SQLException {
        return new CodeRow(
                rs.getString("client_id"),
                rs.getString("principal_id"),
                rs.getString("redirect_uri"),
                ScopeSet.column(rs.getString("scopes")),
                rs.getString("code_challenge"),
                rs.getString("nonce"),
                rs.getString("family_id"),
                Sql.instant(rs, "expires_at"),
                Sql.instant(rs, "used_at"),
                Authentication.fromColumns(Sql.instant(rs, "auth_time"), rs.getString("amr")));
    }

    Map<String, Object> refreshGrant(String issuer, Client client, Map<String, String> p) {
        String refresh = required(p, "refresh_token");
        byte[] hash = Digests.sha256(refresh);
        // the requested scope is checked against the token before the token is claimed: a refresh refused for
        // invalid_scope leaves the token usable and the grant alone (a token's scopes never change)
        Set<String> narrowed = null;
        if (p.get("scope") != null && !p.get("scope").isBlank()) {
            narrowed = ScopeSet.parse(p.get("scope"));
            Optional<TokenRow> presented = sql.one(
                    "SELECT " + TokenRow.COLUMNS + " FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh' "
                            + "AND client_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()",
                    TokenRow::of,
                    hash,
                    client.clientId());
            if (presented.isPresent()
                    && (narrowed == null || !presented.get().scopes().containsAll(narrowed))) {
                throw OAuthError.invalidScope("a refresh may only narrow the granted scopes");
            }
        }
        Optional<TokenRow> claimed = sql.one(
                "UPDATE oauth_tokens SET used_at = now() WHERE token_hash = ? AND kind = 'refresh' "
                        + "AND client_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now() RETURNING "
                        + TokenRow.COLUMNS,
                TokenRow::of,
                hash,
                client.clientId());
        if (claimed.isEmpty()) {
            Optional<TokenRow> row = sql.one(
                    "SELECT " + TokenRow.COLUMNS + " FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh'",
                    TokenRow::of,
                    (Object) hash);
            if (row.isPresent()
                    && row.get().clientId().equals(client.clientId())
                    && row.get().usedAt() != null) {
                int revoked = tokens.revokeFamily(row.get().familyId());
                audit.audit(
                        row.get().principalId(),
                        client.clientId(),
                        "refresh_token_reuse_detected",
                        "revoked the token family (" + revoked + " tokens)");
            }
            throw OAuthError.invalidGrant("the refresh token is invalid, expired, revoked or already used");
        }
        TokenRow row = claimed.get();
        Set<String> scopes = row.scopes();
        if (p.get("scope") != null && !p.get("scope").isBlank()) {
            if (narrowed == null || !row.scopes().containsAll(narrowed)) {
                throw OAuthError.invalidScope("a refresh may only narrow the granted scopes");
            }
            scopes = narrowed;
        }
        if (row.principalId() != null) {
            requireActive(row.principalId());
        }
        return issue(
                issuer,
                client,
                row.principalId(),
                scopes,
                row.familyId(),
                true,
                null,
                row.authentication(),
                "token_refreshed");
    }

    Map<String, Object> clientCredentials(Client client, Map<String, String> p) {
        if (!tokens.principalActive(client.ownerPrincipalId())) {
            throw new OAuthError("unauthorized_client", "the client's owner is suspended", 400);
        }
        Set<String> scopes = Authorizations.requestedScopes(p.get("scope"), client, OAuthError::invalidScope);
        Set<String> granted = new LinkedHashSet<>(scopes);
        granted.removeAll(Set.of("openid", "profile", "email"));
        if (granted.isEmpty() && !scopes.isEmpty() && p.get("scope") != null) {
            throw OAuthError.invalidScope("openid, profile and email need a user: not with client_credentials");
        }
        return issue(
                null,
                client,
                client.ownerPrincipalId(),
                granted,
                Ids.random("fam_", 20),
                false,
                null,
                null,
                "client_credentials_granted");
    }

    /**
     * Issues an access token (and a refresh token, and an ID token for {@code openid}) in {@code familyId}, with its
     * audit entry in the same transaction (one commit per grant).
     */
    Map<String, Object> issue(
            String issuer,
            Client client,
            String principalId,
            Set<String> scopes,
            String familyId,
            boolean withRefresh,
            String nonce,
            Authentication signedIn,
            String auditEvent) {
        String access = Ids.random("ato_", 40);
        String refresh = withRefresh ? Ids.random("atr_", 48) : null;
        Instant now = Instant.now();
        sql.tx(c -> {
            Instant authTime = signedIn == null ? null : signedIn.at();
            String amr = signedIn == null ? null : signedIn.amrColumn();
            Sql.update(
                    c,
                    "INSERT INTO oauth_tokens (token_hash, kind, client_id, principal_id, scopes, family_id, expires_at, "
                            + "auth_time, amr) VALUES (?, 'access', ?, ?, ?, ?, ?, ?, ?)",
                    Digests.sha256(access),
                    client.clientId(),
                    principalId,
                    ScopeSet.join(scopes),
                    familyId,
                    now.plus(OAuthServer.ACCESS_TTL),
                    authTime,
                    amr);
            if (refresh != null) {
                Sql.update(
                        c,
                        "INSERT INTO oauth_tokens (token_hash, kind, client_id, principal_id, scopes, family_id, expires_at, "
                                + "auth_time, amr) VALUES (?, 'refresh', ?, ?, ?, ?, ?, ?, ?)",
                        Digests.sha256(refresh),
                        client.clientId(),
                        principalId,
                        ScopeSet.join(scopes),
                        familyId,
                        now.plus(OAuthServer.REFRESH_TTL),
                        authTime,
                        amr);
            }
            OAuthAuditLog.auditIn(c, principalId, client.clientId(), auditEvent, ScopeSet.join(scopes));
            return null;
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("access_token", access);
        m.put("token_type", "Bearer");
        m.put("expires_in", OAuthServer.ACCESS_TTL.toSeconds());
        if (refresh != null) {
            m.put("refresh_token", refresh);
        }
        m.put("scope", ScopeSet.join(scopes));
        if (issuer != null && principalId != null && scopes.contains("openid")) {
            m.put("id_token", idToken(issuer, client.clientId(), principalId, scopes, nonce, signedIn, access, now));
        }
        return m;
    }

    private String idToken(
            String issuer,
            String clientId,
            String principalId,
            Set<String> scopes,
            String nonce,
            Authentication signedIn,
            String access,
            Instant now) {
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("iss", issuer);
        claims.put("sub", principalId);
        claims.put("aud", clientId);
        claims.put("azp", clientId);
        claims.put("iat", now.getEpochSecond());
        claims.put("exp", now.plus(OAuthServer.ID_TOKEN_TTL).getEpochSecond());
        // when the user signed in, not when this token was made; a grant from before that was recorded says nothing
        if (signedIn != null) {
            claims.put("auth_time", signedIn.at().getEpochSecond());
            if (!signedIn.methods().isEmpty()) {
                claims.put("amr", new java.util.TreeSet<>(signedIn.methods()));
            }
        }
        if (nonce != null) {
            claims.put("nonce", nonce);
        }
        byte[] h = Digests.sha256(access);
        claims.put("at_hash", Digests.base64Url(java.util.Arrays.copyOf(h, 16)));
        claims.putAll(profileClaims(principalId, scopes));
        return keys.sign(claims);
    }

    Map<String, Object> profileClaims(String principalId, Set<String> scopes) {
        Map<String, Object> m = new LinkedHashMap<>();
        PrincipalDirectory.Entry p = principals.get(principalId).orElse(null);
        if (p == null) {
            return m;
        }
        // OpenID Connect Core 5.3.2: a claim without a value is omitted, not null or empty
        if (scopes.contains("profile")) {
            putPresent(m, "preferred_username", p.username());
            putPresent(m, "name", p.name());
            putPresent(m, "picture", p.picture());
        }
        if (scopes.contains("email") && p.email() != null) {
            m.put("email", p.email());
        }
        return m;
    }

    private static void putPresent(Map<String, Object> m, String claim, String value) {
        if (value != null && !value.isBlank()) {
            m.put(claim, value);
        }
    }

    void requireActive(String principalId) {
        PrincipalDirectory.Entry p = principals.get(principalId).orElse(null);
        if (p == null || !p.active()) {
            throw OAuthError.invalidGrant("the user of this grant is suspended or gone");
        }
    }

    static String required(Map<String, String> p, String name) {
        String v = p.get(name);
        if (v == null || v.isEmpty()) {
            throw OAuthError.invalidRequest(name + " is required");
        }
        return v;
    }
}
