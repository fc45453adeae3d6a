package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Sql;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import javax.sql.DataSource;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.PrincipalDirectory;

/**
 * The authorization server's rules and state: clients, authorization codes, tokens and their families, device
 * codes, consents and the audit log. Resources translate HTTP to these calls; every failure of the protocol is an
 * {@link OAuthError}.
 */
@Component(service = OAuthServer.class)
public class OAuthServer {

    static final Duration CODE_TTL = Duration.ofSeconds(60);
    static final Duration ACCESS_TTL = Duration.ofHours(1);
    static final Duration REFRESH_TTL = Duration.ofDays(30);
    static final Duration ID_TOKEN_TTL = Duration.ofHours(1);
    static final Duration DEVICE_TTL = Duration.ofMinutes(10);
    static final int DEVICE_INTERVAL = 2;
    static final String DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
    static final Set<String> GRANT_TYPES = Set.of("authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT);
    static final Set<String> AUTH_METHODS = Set.of("client_secret_basic", "client_secret_post", "none");

    private final Sql sql;
    private final SigningKeys keys;
    private final PrincipalDirectory principals;
    private final dev.atrium.kernel.api.PublicUrls urls;

    @Activate
    public OAuthServer(@Reference DataSource dataSource, @Reference SigningKeys keys, @Reference PrincipalDirectory principals,
            @Reference dev.atrium.kernel.api.PublicUrls urls) {
        this.sql = new Sql(dataSource);
        this.keys = keys;
        this.principals = principals;
        this.urls = urls;
    }

    /**
     * The issuer, and base of every URL the server publishes: {@code ATRIUM_OAUTH_ISSUER} when set, else the
     * operator's public base URL, else (and the kernel warned at start) the request's own scheme and Host.
     */
    String issuer(java.net.URI requestBase) {
        String configured = System.getenv("ATRIUM_OAUTH_ISSUER");
        if (configured != null && !configured.isBlank()) {
            return configured.replaceAll("/+$", "");
        }
        return urls.base(requestBase);
    }

    // ---------------------------------------------------------------- clients

    record ClientSpec(String name, List<String> redirectUris, Set<String> grantTypes, Set<String> scopes, String authMethod,
            String clientUri, String logoUri) {
    }

    record Registered(Client client, String secret, String registrationToken) {
        Map<String, Object> toJson(String issuer) {
            Map<String, Object> m = client.toJson();
            if (secret != null) {
                m.put("client_secret", secret);
                m.put("client_secret_expires_at", 0);
            }
            if (registrationToken != null) {
                m.put("registration_access_token", registrationToken);
                m.put("registration_client_uri", issuer + "/oauth/register/" + client.clientId());
            }
            return m;
        }
    }

    /** The most redirect URIs a client may register: a real client has one or a few. */
    static final int MAX_REDIRECT_URIS = 20;

    /** Checks registration metadata; {@code invalid} builds the caller's error (RFC 7591 or the API's 400). */
    static void checkSpec(ClientSpec spec, java.util.function.Function<String, RuntimeException> invalid) {
        if (spec.name() == null || spec.name().isBlank() || spec.name().length() > 200) {
            throw invalid.apply("client_name must be 1 to 200 characters");
        }
        for (String g : spec.grantTypes()) {
            if (!GRANT_TYPES.contains(g)) {
                throw invalid.apply("unsupported grant type '" + g + "'");
            }
        }
        if (!AUTH_METHODS.contains(spec.authMethod())) {
            throw invalid.apply("token_endpoint_auth_method must be one of client_secret_basic, client_secret_post, none");
        }
        if ("none".equals(spec.authMethod()) && spec.grantTypes().contains("client_credentials")) {
            throw invalid.apply("a public client cannot use client_credentials");
        }
        if (spec.redirectUris().size() > MAX_REDIRECT_URIS) {
            throw invalid.apply("redirect_uris may hold at most " + MAX_REDIRECT_URIS + " URIs");
        }
        if (spec.authMethod() != null && spec.authMethod().length() > 100) {
            throw invalid.apply("token_endpoint_auth_method must be one of client_secret_basic, client_secret_post, none");
        }
        if (spec.grantTypes().contains("authorization_code") && spec.redirectUris().isEmpty()) {
            throw invalid.apply("redirect_uris must name at least one URI for the authorization_code grant");
        }
        for (String u : spec.redirectUris()) {
            try {
                URI uri = new URI(u);
                if (u.length() > 2000) {
                    throw invalid.apply("redirect_uris: each URI must be at most 2000 characters");
                }
                if (!uri.isAbsolute() || uri.getFragment() != null) {
                    throw invalid.apply("redirect_uris must be absolute URIs without a fragment: " + u);
                }
                String refused = refusedRedirectScheme(uri);
                if (refused != null) {
                    throw invalid.apply(refused + ": " + u);
                }
            } catch (URISyntaxException e) {
                throw invalid.apply("redirect_uris holds an invalid URI: " + u);
            }
        }
        for (String u : java.util.Arrays.asList(spec.clientUri(), spec.logoUri())) {
            if (u != null && u.length() > 2000) {
                throw invalid.apply("client_uri and logo_uri must be at most 2000 characters");
            }
            if (u != null && !u.isEmpty() && !(u.startsWith("https://") || u.startsWith("http://"))) {
                throw invalid.apply("client_uri and logo_uri must be http(s) URLs: " + u);
            }
        }
        if (spec.scopes().isEmpty()) {
            throw invalid.apply("scope must name at least one scope");
        }
    }

    /**
     * Why a redirect URI's scheme is refused, or null: https anywhere, http only on a loopback host (RFC 8252
     * §7.3), or a private-use scheme in reverse-domain form (RFC 8252 §7.1, {@code com.example.app:/cb}). Anything
     * else ({@code javascript:}, {@code data:}, {@code file:}, …) would run or read something in the user's browser
     * when the server redirects there.
     */
    static String refusedRedirectScheme(URI uri) {
        String scheme = uri.getScheme().toLowerCase(java.util.Locale.ROOT);
        String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(java.util.Locale.ROOT);
        if (scheme.equals("https")) {
            return host.isEmpty() ? "redirect_uris: an https redirect URI needs a host" : null;
        }
        if (scheme.equals("http")) {
            boolean loopback = host.equals("127.0.0.1") || host.equals("[::1]") || host.equals("::1") || host.equals("localhost");
            return loopback ? null : "redirect_uris: plain http is allowed on loopback hosts only; use https";
        }
        if (scheme.contains(".")) {
            return null;
        }
        return "redirect_uris must use https, http on a loopback host, or a reverse-domain private-use scheme";
    }

    Registered register(String ownerPrincipalId, ClientSpec spec, boolean dynamic) {
        String clientId = Ids.random("atc_", 24);
        String secret = "none".equals(spec.authMethod()) ? null : Ids.random("atcs_", 40);
        String registrationToken = dynamic ? Ids.random("atg_", 40) : null;
        Client client = sql.one("INSERT INTO oauth_clients (client_id, secret_hash, owner_principal_id, client_name, redirect_uris, "
                + "grant_types, scopes, token_endpoint_auth_method, client_uri, logo_uri, registration_token_hash) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + Client.COLUMNS, Client::of, clientId,
                secret == null ? null : Digests.sha256(secret), ownerPrincipalId, spec.name().trim(),
                String.join("\n", spec.redirectUris()), ScopeSet.join(spec.grantTypes()), ScopeSet.join(spec.scopes()),
                spec.authMethod(), spec.clientUri(), spec.logoUri(),
                registrationToken == null ? null : Digests.sha256(registrationToken)).orElseThrow();
        audit(ownerPrincipalId, clientId, "client_created", dynamic ? "dynamic registration" : null);
        return new Registered(client, secret, registrationToken);
    }

    /**
     * Client authentication reads clients through a cache of a few seconds: the token and introspection endpoints
     * are the hot path. This instance drops an entry when the client changes; another instance may accept a
     * deleted client or an old secret for at most {@link #CLIENT_CACHE}.
     */
    private static final Duration CLIENT_CACHE = Duration.ofSeconds(5);
    private final java.util.concurrent.ConcurrentHashMap<String, CachedClient> clientCache = new java.util.concurrent.ConcurrentHashMap<>();

    private record CachedClient(Optional<Client> client, Instant at) {
    }

    private Optional<Client> cachedClient(String clientId) {
        CachedClient c = clientCache.get(clientId == null ? "" : clientId);
        if (c != null && c.at().plus(CLIENT_CACHE).isAfter(Instant.now())) {
            return c.client();
        }
        Optional<Client> fresh = client(clientId);
        if (clientCache.size() > 10_000) {
            clientCache.clear();
        }
        if (clientId != null && fresh.isPresent()) {
            clientCache.put(clientId, new CachedClient(fresh, Instant.now()));
        }
        return fresh;
    }

    Optional<Client> client(String clientId) {
        if (clientId == null || clientId.length() > 100) {
            return Optional.empty();
        }
        return sql.one("SELECT " + Client.COLUMNS + " FROM oauth_clients WHERE client_id = ?", Client::of, clientId);
    }

    /** RFC 7592 read: the client whose registration access token this is. */
    Optional<Client> clientByRegistrationToken(String clientId, String token) {
        if (token == null) {
            return Optional.empty();
        }
        return sql.one("SELECT " + Client.COLUMNS + " FROM oauth_clients WHERE client_id = ? AND registration_token_hash = ?",
                Client::of, clientId, Digests.sha256(token));
    }

    List<Client> owned(String principalId) {
        return sql.list("SELECT " + Client.COLUMNS + " FROM oauth_clients WHERE owner_principal_id = ? ORDER BY created_at, client_id",
                Client::of, principalId);
    }

    Client ownedClient(String principalId, String clientId) {
        return client(clientId).filter(c -> principalId.equals(c.ownerPrincipalId()))
                .orElseThrow(() -> ApiException.notFound("OAuth client not found"));
    }

    Client update(String principalId, String clientId, String name, List<String> redirectUris, Set<String> scopes,
            String clientUri, String logoUri) {
        Client c = ownedClient(principalId, clientId);
        ClientSpec spec = new ClientSpec(name == null ? c.name() : name, redirectUris == null ? c.redirectUris() : redirectUris,
                c.grantTypes(), scopes == null ? c.scopes() : scopes, c.authMethod(), clientUri == null ? c.clientUri() : clientUri,
                logoUri == null ? c.logoUri() : logoUri);
        checkSpec(spec, ApiException::badRequest);
        Client updated = sql.one("UPDATE oauth_clients SET client_name = ?, redirect_uris = ?, scopes = ?, client_uri = ?, logo_uri = ?, "
                + "updated_at = now() WHERE client_id = ? RETURNING " + Client.COLUMNS, Client::of, spec.name().trim(),
                String.join("\n", spec.redirectUris()), ScopeSet.join(spec.scopes()), spec.clientUri(), spec.logoUri(), clientId)
                .orElseThrow();
        clientCache.remove(clientId);
        audit(principalId, clientId, "client_updated", null);
        return updated;
    }

    void delete(String principalId, String clientId) {
        ownedClient(principalId, clientId);
        sql.update("DELETE FROM oauth_clients WHERE client_id = ?", clientId);
        clientCache.remove(clientId);
        forgetCached(t -> clientId.equals(t.clientId()));
        audit(principalId, clientId, "client_deleted", null);
    }

    /**
     * Client authentication at the token, introspection, revocation and device endpoints: HTTP Basic
     * (client_secret_basic, RFC 6749 §2.3.1), the body's client_secret (client_secret_post), or a public client's
     * bare client_id.
     */
    Client authenticate(String authorization, String bodyClientId, String bodySecret) {
        String clientId = bodyClientId;
        String secret = bodySecret;
        boolean basic = false;
        if (authorization != null && authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            String decoded;
            try {
                decoded = new String(Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw OAuthError.invalidClient("malformed Basic credentials");
            }
            int colon = decoded.indexOf(':');
            if (colon < 0) {
                throw OAuthError.invalidClient("malformed Basic credentials");
            }
            String basicId;
            try {
                basicId = urlDecode(decoded.substring(0, colon));
                secret = urlDecode(decoded.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                throw OAuthError.invalidClient("malformed Basic credentials: bad %-escape");
            }
            if (bodyClientId != null && !bodyClientId.equals(basicId) || bodySecret != null) {
                throw OAuthError.invalidRequest("send the client credentials in one way only");
            }
            clientId = basicId;
            basic = true;
        }
        if (clientId == null || clientId.isBlank()) {
            throw OAuthError.invalidClient("client authentication failed: no client_id");
        }
        Client client = cachedClient(clientId).orElseThrow(() -> OAuthError.invalidClient("client authentication failed"));
        if (client.isPublic()) {
            if (secret != null && !secret.isEmpty()) {
                throw OAuthError.invalidClient("client authentication failed");
            }
            return client;
        }
        if (secret == null || client.secretHash() == null
                || !Digests.constantTimeEquals(client.secretHash(), Digests.sha256(secret))) {
            throw OAuthError.invalidClient("client authentication failed");
        }
        if (!basic && "client_secret_basic".equals(client.authMethod()) || basic && "client_secret_post".equals(client.authMethod())) {
            // RFC 7591 names one method per client; both are accepted so that any standard client library works
        }
        return client;
    }

    private static String urlDecode(String s) {
        return java.net.URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- authorization

    /** A checked authorization request. */
    record AuthorizeRequest(Client client, String redirectUri, boolean redirectUriGiven, Set<String> scopes, String state,
            String codeChallenge, String nonce) {
    }

    /** An authorization error sent back to the client's redirect URI (RFC 6749 §4.1.2.1). */
    static final class RedirectError extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String error;
        final String redirectUri;
        final String state;

        RedirectError(String error, String description, String redirectUri, String state) {
            super(description);
            this.error = error;
            this.redirectUri = redirectUri;
            this.state = state;
        }

        String location() {
            return withQuery(redirectUri, "error", error, "error_description", getMessage(), "state", state);
        }
    }

    /**
     * Checks an authorization request. An unknown client or a redirect URI that is not registered exactly is an
     * {@link OAuthError} shown to the user (never a redirect to an unverified URI); everything after that is a
     * {@link RedirectError}.
     */
    AuthorizeRequest checkAuthorize(Map<String, String> p) {
        String clientId = p.get("client_id");
        Client client = client(clientId).orElseThrow(() -> new OAuthError("invalid_client", "unknown client_id", 400));
        String given = p.get("redirect_uri");
        String redirectUri;
        if (given == null || given.isEmpty()) {
            if (client.redirectUris().size() != 1) {
                throw OAuthError.invalidRequest("redirect_uri is required: the client registered several");
            }
            redirectUri = client.redirectUris().get(0);
        } else if (client.redirectUris().contains(given)) {
            redirectUri = given;
        } else {
            throw OAuthError.unauthorizedClient("the redirect_uri is not registered for this client");
        }
        String state = p.get("state");
        if (!"code".equals(p.get("response_type"))) {
            throw new RedirectError("unsupported_response_type", "response_type must be code", redirectUri, state);
        }
        if (!client.grantTypes().contains("authorization_code")) {
            throw new RedirectError("unauthorized_client", "this client may not use the authorization_code grant", redirectUri, state);
        }
        Set<String> scopes = requestedScopes(p.get("scope"), client,
                msg -> new RedirectError("invalid_scope", msg, redirectUri, state));
        String challenge = p.get("code_challenge");
        String method = p.get("code_challenge_method");
        if (challenge == null || challenge.isEmpty()) {
            if (client.isPublic()) {
                throw new RedirectError("invalid_request", "a public client must use PKCE (code_challenge with S256)", redirectUri, state);
            }
            challenge = null;
        } else {
            if (!"S256".equals(method)) {
                throw new RedirectError("invalid_request", "code_challenge_method must be S256", redirectUri, state);
            }
            if (!challenge.matches("[A-Za-z0-9_-]{43}")) {
                throw new RedirectError("invalid_request", "code_challenge must be a base64url SHA-256", redirectUri, state);
            }
        }
        String nonce = p.get("nonce");
        if (nonce != null && nonce.length() > 500) {
            throw new RedirectError("invalid_request", "nonce is too long", redirectUri, state);
        }
        return new AuthorizeRequest(client, redirectUri, given != null && !given.isEmpty(), scopes, state, challenge, nonce);
    }

    /** The requested scopes: known, within the client's, and the client's own when none are named. */
    static Set<String> requestedScopes(String requested, Client client, java.util.function.Function<String, RuntimeException> invalid) {
        Set<String> scopes = ScopeSet.parse(requested);
        if (scopes == null) {
            throw invalid.apply("unknown scope in '" + requested + "'");
        }
        if (scopes.isEmpty()) {
            return client.scopes();
        }
        for (String s : scopes) {
            if (!client.scopes().contains(s)) {
                throw invalid.apply("scope '" + s + "' is not registered for this client");
            }
        }
        return scopes;
    }

    /** The user approved: records the consent and returns the redirect carrying a fresh code. */
    String approve(String principalId, AuthorizeRequest r) {
        String code = Ids.random("atac_", 40);
        sql.tx(c -> {
            Sql.update(c, "INSERT INTO oauth_codes (code_hash, client_id, principal_id, redirect_uri, scopes, code_challenge, nonce, "
                    + "family_id, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", Digests.sha256(code), r.client().clientId(),
                    principalId, r.redirectUriGiven() ? r.redirectUri() : null, ScopeSet.join(r.scopes()), r.codeChallenge(),
                    r.nonce(), Ids.random("fam_", 20), Instant.now().plus(CODE_TTL));
            consent(c, principalId, r.client().clientId(), r.scopes());
            return null;
        });
        audit(principalId, r.client().clientId(), "authorization_granted", ScopeSet.join(r.scopes()));
        return withQuery(r.redirectUri(), "code", code, "state", r.state());
    }

    String deny(String principalId, AuthorizeRequest r) {
        audit(principalId, r.client().clientId(), "authorization_denied", ScopeSet.join(r.scopes()));
        return withQuery(r.redirectUri(), "error", "access_denied", "error_description", "the user denied the request",
                "state", r.state());
    }

    private void consent(Connection c, String principalId, String clientId, Set<String> scopes) throws SQLException {
        Set<String> all = new LinkedHashSet<>(Sql.one(c, "SELECT scopes FROM oauth_consents WHERE principal_id = ? AND client_id = ?",
                rs -> ScopeSet.column(rs.getString(1)), principalId, clientId).orElse(Set.of()));
        boolean changed = all.addAll(scopes);
        Sql.update(c, "INSERT INTO oauth_consents (principal_id, client_id, scopes) VALUES (?, ?, ?) "
                + "ON CONFLICT (principal_id, client_id) DO UPDATE SET scopes = excluded.scopes, updated_at = now()",
                principalId, clientId, ScopeSet.join(all));
        if (changed) {
            auditIn(c, principalId, clientId, "consent_granted", ScopeSet.join(all));
        }
    }

    // ---------------------------------------------------------------- token endpoint

    Map<String, Object> token(String issuer, Client client, Map<String, String> p) {
        String grant = p.get("grant_type");
        if (grant == null || grant.isEmpty()) {
            throw OAuthError.invalidRequest("grant_type is required");
        }
        if (!GRANT_TYPES.contains(grant)) {
            throw OAuthError.unsupportedGrantType("grant_type '" + grant + "' is not supported");
        }
        if (!client.grantTypes().contains(grant)) {
            throw OAuthError.unauthorizedClient("this client may not use the " + grant + " grant");
        }
        return switch (grant) {
            case "authorization_code" -> codeGrant(issuer, client, p);
            case "refresh_token" -> refreshGrant(issuer, client, p);
            case "client_credentials" -> clientCredentials(client, p);
            default -> deviceGrant(issuer, client, p);
        };
    }

    private record CodeRow(String clientId, String principalId, String redirectUri, Set<String> scopes, String challenge,
            String nonce, String familyId, Instant expiresAt, Instant usedAt) {
    }

    private Map<String, Object> codeGrant(String issuer, Client client, Map<String, String> p) {
        String code = required(p, "code");
        byte[] hash = Digests.sha256(code);
        // only the client the code was issued to can use it up: a leaked code in another client's hands burns nothing
        Optional<CodeRow> claimed = sql.one("UPDATE oauth_codes SET used_at = now() WHERE code_hash = ? AND client_id = ? "
                + "AND used_at IS NULL "
                + "RETURNING client_id, principal_id, redirect_uri, scopes, code_challenge, nonce, family_id, expires_at, used_at",
                OAuthServer::codeRow, hash, client.clientId());
        if (claimed.isEmpty()) {
            Optional<CodeRow> used = sql.one("SELECT client_id, principal_id, redirect_uri, scopes, code_challenge, nonce, family_id, "
                    + "expires_at, used_at FROM oauth_codes WHERE code_hash = ?", OAuthServer::codeRow, (Object) hash);
            if (used.isPresent() && used.get().clientId().equals(client.clientId())) {
                int revoked = revokeFamily(used.get().familyId());
                audit(used.get().principalId(), client.clientId(), "code_reuse_detected", "revoked " + revoked + " tokens");
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
        if (row.redirectUri() != null && !row.redirectUri().equals(redirectUri)
                || row.redirectUri() == null && redirectUri != null && !client.redirectUris().contains(redirectUri)) {
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
        return issue(issuer, client, row.principalId(), row.scopes(), row.familyId(), refresh, row.nonce(), "code_exchanged");
    }

    private static CodeRow codeRow(java.sql.ResultSet rs) throws SQLException {
        return new CodeRow(rs.getString("client_id"), rs.getString("principal_id"), rs.getString("redirect_uri"),
                ScopeSet.column(rs.getString("scopes")), rs.getString("code_challenge"), rs.getString("nonce"),
                rs.getString("family_id"), Sql.instant(rs, "expires_at"), Sql.instant(rs, "used_at"));
    }

    private record TokenRow(String kind, String clientId, String principalId, Set<String> scopes, String familyId,
            Instant expiresAt, Instant usedAt, Instant revokedAt, Instant createdAt) {
        boolean active() {
            return revokedAt == null && expiresAt.isAfter(Instant.now()) && (!"refresh".equals(kind) || usedAt == null);
        }
    }

    private static TokenRow tokenRow(java.sql.ResultSet rs) throws SQLException {
        return new TokenRow(rs.getString("kind"), rs.getString("client_id"), rs.getString("principal_id"),
                ScopeSet.column(rs.getString("scopes")), rs.getString("family_id"), Sql.instant(rs, "expires_at"),
                Sql.instant(rs, "used_at"), Sql.instant(rs, "revoked_at"), Sql.instant(rs, "created_at"));
    }

    private static final String TOKEN_COLUMNS = "kind, client_id, principal_id, scopes, family_id, expires_at, used_at, revoked_at, created_at";

    private Map<String, Object> refreshGrant(String issuer, Client client, Map<String, String> p) {
        String refresh = required(p, "refresh_token");
        byte[] hash = Digests.sha256(refresh);
        // the requested scope is checked against the token before the token is claimed: a refresh refused for
        // invalid_scope leaves the token usable and the grant alone (a token's scopes never change)
        Set<String> narrowed = null;
        if (p.get("scope") != null && !p.get("scope").isBlank()) {
            narrowed = ScopeSet.parse(p.get("scope"));
            Optional<TokenRow> presented = sql.one("SELECT " + TOKEN_COLUMNS + " FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh' "
                    + "AND client_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()", OAuthServer::tokenRow, hash,
                    client.clientId());
            if (presented.isPresent() && (narrowed == null || !presented.get().scopes().containsAll(narrowed))) {
                throw OAuthError.invalidScope("a refresh may only narrow the granted scopes");
            }
        }
        Optional<TokenRow> claimed = sql.one("UPDATE oauth_tokens SET used_at = now() WHERE token_hash = ? AND kind = 'refresh' "
                + "AND client_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now() RETURNING " + TOKEN_COLUMNS,
                OAuthServer::tokenRow, hash, client.clientId());
        if (claimed.isEmpty()) {
            Optional<TokenRow> row = sql.one("SELECT " + TOKEN_COLUMNS + " FROM oauth_tokens WHERE token_hash = ? AND kind = 'refresh'",
                    OAuthServer::tokenRow, (Object) hash);
            if (row.isPresent() && row.get().clientId().equals(client.clientId()) && row.get().usedAt() != null) {
                int revoked = revokeFamily(row.get().familyId());
                audit(row.get().principalId(), client.clientId(), "refresh_token_reuse_detected",
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
        return issue(issuer, client, row.principalId(), scopes, row.familyId(), true, null, "token_refreshed");
    }

    boolean principalActive(String principalId) {
        return principals.get(principalId).map(PrincipalDirectory.Entry::active).orElse(false);
    }

    private Map<String, Object> clientCredentials(Client client, Map<String, String> p) {
        if (!principalActive(client.ownerPrincipalId())) {
            throw new OAuthError("unauthorized_client", "the client's owner is suspended", 400);
        }
        Set<String> scopes = requestedScopes(p.get("scope"), client, OAuthError::invalidScope);
        Set<String> granted = new LinkedHashSet<>(scopes);
        granted.removeAll(Set.of("openid", "profile", "email"));
        if (granted.isEmpty() && !scopes.isEmpty() && p.get("scope") != null) {
            throw OAuthError.invalidScope("openid, profile and email need a user: not with client_credentials");
        }
        return issue(null, client, client.ownerPrincipalId(), granted, Ids.random("fam_", 20), false, null,
                "client_credentials_granted");
    }

    /**
     * Issues an access token (and a refresh token, and an ID token for {@code openid}) in {@code familyId}, with its
     * audit entry in the same transaction (one commit per grant).
     */
    private Map<String, Object> issue(String issuer, Client client, String principalId, Set<String> scopes, String familyId,
            boolean withRefresh, String nonce, String auditEvent) {
        String access = Ids.random("ato_", 40);
        String refresh = withRefresh ? Ids.random("atr_", 48) : null;
        Instant now = Instant.now();
        sql.tx(c -> {
            Sql.update(c, "INSERT INTO oauth_tokens (token_hash, kind, client_id, principal_id, scopes, family_id, expires_at) "
                    + "VALUES (?, 'access', ?, ?, ?, ?, ?)", Digests.sha256(access), client.clientId(), principalId,
                    ScopeSet.join(scopes), familyId, now.plus(ACCESS_TTL));
            if (refresh != null) {
                Sql.update(c, "INSERT INTO oauth_tokens (token_hash, kind, client_id, principal_id, scopes, family_id, expires_at) "
                        + "VALUES (?, 'refresh', ?, ?, ?, ?, ?)", Digests.sha256(refresh), client.clientId(), principalId,
                        ScopeSet.join(scopes), familyId, now.plus(REFRESH_TTL));
            }
            auditIn(c, principalId, client.clientId(), auditEvent, ScopeSet.join(scopes));
            return null;
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("access_token", access);
        m.put("token_type", "Bearer");
        m.put("expires_in", ACCESS_TTL.toSeconds());
        if (refresh != null) {
            m.put("refresh_token", refresh);
        }
        m.put("scope", ScopeSet.join(scopes));
        if (issuer != null && principalId != null && scopes.contains("openid")) {
            m.put("id_token", idToken(issuer, client.clientId(), principalId, scopes, nonce, access, now));
        }
        return m;
    }

    private String idToken(String issuer, String clientId, String principalId, Set<String> scopes, String nonce, String access,
            Instant now) {
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("iss", issuer);
        claims.put("sub", principalId);
        claims.put("aud", clientId);
        claims.put("azp", clientId);
        claims.put("iat", now.getEpochSecond());
        claims.put("exp", now.plus(ID_TOKEN_TTL).getEpochSecond());
        claims.put("auth_time", now.getEpochSecond());
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
        if (scopes.contains("profile")) {
            m.put("preferred_username", p.username());
            m.put("name", p.name());
            m.put("picture", p.picture());
        }
        if (scopes.contains("email") && p.email() != null) {
            m.put("email", p.email());
        }
        return m;
    }

    private void requireActive(String principalId) {
        PrincipalDirectory.Entry p = principals.get(principalId).orElse(null);
        if (p == null || !p.active()) {
            throw OAuthError.invalidGrant("the user of this grant is suspended or gone");
        }
    }

    int revokeFamily(String familyId) {
        forgetCached(t -> t.familyId().equals(familyId));
        return sql.update("UPDATE oauth_tokens SET revoked_at = now() WHERE family_id = ? AND revoked_at IS NULL", familyId);
    }

    private static String required(Map<String, String> p, String name) {
        String v = p.get(name);
        if (v == null || v.isEmpty()) {
            throw OAuthError.invalidRequest(name + " is required");
        }
        return v;
    }

    // ---------------------------------------------------------------- device flow (RFC 8628)

    Map<String, Object> deviceAuthorization(String issuer, Client client, Map<String, String> p) {
        if (!client.grantTypes().contains(DEVICE_GRANT)) {
            throw OAuthError.unauthorizedClient("this client may not use the device_code grant");
        }
        Set<String> scopes = requestedScopes(p.get("scope"), client, OAuthError::invalidScope);
        String deviceCode = Ids.random("atd_", 40);
        String userCode = null;
        for (int attempt = 0; userCode == null && attempt < 5; attempt++) {
            String candidate = UserCodes.generate();
            try {
                sql.update("INSERT INTO oauth_device_codes (device_code_hash, user_code, client_id, scopes, interval_seconds, expires_at) "
                        + "VALUES (?, ?, ?, ?, ?, ?)", Digests.sha256(deviceCode), candidate, client.clientId(), ScopeSet.join(scopes),
                        DEVICE_INTERVAL, Instant.now().plus(DEVICE_TTL));
                userCode = candidate;
            } catch (RuntimeException collision) {
                if (attempt == 4) {
                    throw collision;
                }
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("device_code", deviceCode);
        m.put("user_code", userCode);
        m.put("verification_uri", issuer + "/oauth/device");
        m.put("verification_uri_complete", issuer + "/oauth/device?user_code=" + userCode);
        m.put("expires_in", DEVICE_TTL.toSeconds());
        m.put("interval", DEVICE_INTERVAL);
        return m;
    }

    record DeviceRow(byte[] hash, String userCode, String clientId, Set<String> scopes, String principalId, String status,
            int interval, Instant lastPollAt, Instant expiresAt) {
    }

    private static DeviceRow deviceRow(java.sql.ResultSet rs) throws SQLException {
        return new DeviceRow(rs.getBytes("device_code_hash"), rs.getString("user_code"), rs.getString("client_id"),
                ScopeSet.column(rs.getString("scopes")), rs.getString("principal_id"), rs.getString("status"),
                rs.getInt("interval_seconds"), Sql.instant(rs, "last_poll_at"), Sql.instant(rs, "expires_at"));
    }

    private static final String DEVICE_COLUMNS = "device_code_hash, user_code, client_id, scopes, principal_id, status, "
            + "interval_seconds, last_poll_at, expires_at";

    /** A pending device request by its user code, for the verification page; 404 when unknown or expired. */
    DeviceRow pendingDevice(String userCode) {
        return sql.one("SELECT " + DEVICE_COLUMNS + " FROM oauth_device_codes WHERE user_code = ? AND status = 'pending' "
                + "AND expires_at > now()", OAuthServer::deviceRow, UserCodes.normalize(userCode))
                .orElseThrow(() -> ApiException.notFound("no pending device request has this code"));
    }

    void decideDevice(String principalId, String userCode, boolean approve) {
        DeviceRow row = pendingDevice(userCode);
        int n = sql.tx(c -> {
            int changed = Sql.update(c, "UPDATE oauth_device_codes SET status = ?, principal_id = ? WHERE device_code_hash = ? "
                    + "AND status = 'pending'", approve ? "approved" : "denied", principalId, row.hash());
            if (changed == 1 && approve) {
                consent(c, principalId, row.clientId(), row.scopes());
            }
            return changed;
        });
        if (n != 1) {
            throw ApiException.notFound("no pending device request has this code");
        }
        audit(principalId, row.clientId(), approve ? "device_authorization_granted" : "device_authorization_denied",
                ScopeSet.join(row.scopes()));
    }

    private Map<String, Object> deviceGrant(String issuer, Client client, Map<String, String> p) {
        byte[] hash = Digests.sha256(required(p, "device_code"));
        DeviceRow row = sql.one("SELECT " + DEVICE_COLUMNS + " FROM oauth_device_codes WHERE device_code_hash = ?",
                OAuthServer::deviceRow, (Object) hash).filter(r -> r.clientId().equals(client.clientId()))
                .orElseThrow(() -> OAuthError.invalidGrant("unknown device_code"));
        if (row.expiresAt().isBefore(Instant.now())) {
            throw new OAuthError("expired_token", "the device code has expired", 400);
        }
        Instant now = Instant.now();
        sql.update("UPDATE oauth_device_codes SET last_poll_at = now() WHERE device_code_hash = ?", (Object) hash);
        switch (row.status()) {
            case "denied" -> throw new OAuthError("access_denied", "the user denied the request", 400);
            case "used" -> throw OAuthError.invalidGrant("the device code was already used");
            case "pending" -> {
                if (row.lastPollAt() != null && row.lastPollAt().plusSeconds(row.interval()).isAfter(now.plusMillis(250))) {
                    throw new OAuthError("slow_down", "poll at most every " + row.interval() + " seconds", 400);
                }
                throw new OAuthError("authorization_pending", "the user has not decided yet", 400);
            }
            default -> {
                // approved
            }
        }
        if (sql.update("UPDATE oauth_device_codes SET status = 'used' WHERE device_code_hash = ? AND status = 'approved'",
                (Object) hash) != 1) {
            throw OAuthError.invalidGrant("the device code was already used");
        }
        requireActive(row.principalId());
        boolean refresh = client.grantTypes().contains("refresh_token");
        return issue(issuer, client, row.principalId(), row.scopes(), Ids.random("fam_", 20), refresh, null, "device_code_exchanged");
    }

    // ---------------------------------------------------------------- introspection, revocation, bearer use

    /**
     * Introspection answers for access tokens come from a cache of {@link #INTROSPECTION_CACHE}: resource servers
     * ask about the same token again and again. Revocation on this instance drops the entries at once; another
     * instance's revocation is seen within that time. Expiry is checked on every answer.
     */
    private static final Duration INTROSPECTION_CACHE = Duration.ofSeconds(2);
    private final java.util.concurrent.ConcurrentHashMap<String, CachedToken> tokenCache = new java.util.concurrent.ConcurrentHashMap<>();

    private record CachedToken(TokenRow row, Instant at) {
    }

    private Optional<TokenRow> introspected(String token) {
        byte[] hash = Digests.sha256(token);
        String key = Digests.base64Url(hash);
        CachedToken cached = tokenCache.get(key);
        if (cached != null && cached.at().plus(INTROSPECTION_CACHE).isAfter(Instant.now())) {
            return Optional.of(cached.row());
        }
        Optional<TokenRow> row = sql.one("SELECT " + TOKEN_COLUMNS + " FROM oauth_tokens WHERE token_hash = ?", OAuthServer::tokenRow,
                (Object) hash);
        if (row.isPresent() && row.get().principalId() != null && !principalActive(row.get().principalId())) {
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

    private void forgetCached(java.util.function.Predicate<TokenRow> which) {
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
        Optional<TokenRow> row = sql.one("SELECT " + TOKEN_COLUMNS + " FROM oauth_tokens WHERE token_hash = ?",
                OAuthServer::tokenRow, (Object) Digests.sha256(token));
        if (row.isEmpty() || !row.get().clientId().equals(client.clientId())) {
            return;
        }
        if ("refresh".equals(row.get().kind())) {
            revokeFamily(row.get().familyId());
        } else {
            sql.update("UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = ? AND revoked_at IS NULL",
                    (Object) Digests.sha256(token));
            tokenCache.remove(Digests.base64Url(Digests.sha256(token)));
        }
        audit(row.get().principalId(), client.clientId(), "token_revoked", row.get().kind());
    }

    record Bearer(String principalId, String clientId, Set<String> scopes) {
    }

    /** An active access token's grant, or empty. */
    Optional<Bearer> bearer(String token) {
        if (token == null || !token.startsWith("ato_") || token.length() > 200) {
            return Optional.empty();
        }
        return sql.one("SELECT principal_id, client_id, scopes FROM oauth_tokens WHERE token_hash = ? AND kind = 'access' "
                + "AND revoked_at IS NULL AND expires_at > now()", rs -> new Bearer(rs.getString("principal_id"),
                        rs.getString("client_id"), ScopeSet.column(rs.getString("scopes"))), (Object) Digests.sha256(token));
    }

    PrincipalDirectory principals() {
        return principals;
    }

    // ---------------------------------------------------------------- consents and audit

    List<Map<String, Object>> consents(String principalId) {
        return sql.list("SELECT k.client_id, k.scopes, k.created_at, k.updated_at, c.client_name, c.client_uri, c.logo_uri "
                + "FROM oauth_consents k JOIN oauth_clients c ON c.client_id = k.client_id WHERE k.principal_id = ? "
                + "ORDER BY k.updated_at DESC, k.client_id", rs -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("client_id", rs.getString("client_id"));
                    m.put("client_name", rs.getString("client_name"));
                    m.put("client_uri", rs.getString("client_uri"));
                    m.put("logo_uri", rs.getString("logo_uri"));
                    m.put("scopes", new ArrayList<>(ScopeSet.column(rs.getString("scopes"))));
                    m.put("created_at", Sql.instant(rs, "created_at").toString());
                    m.put("updated_at", Sql.instant(rs, "updated_at").toString());
                    return m;
                }, principalId);
    }

    /** Withdraws the consent and revokes every token the client holds for this user; false when there was none. */
    boolean revokeConsent(String principalId, String clientId) {
        int[] counts = sql.tx(c -> new int[] {
                Sql.update(c, "DELETE FROM oauth_consents WHERE principal_id = ? AND client_id = ?", principalId, clientId),
                Sql.update(c, "UPDATE oauth_tokens SET revoked_at = now() WHERE principal_id = ? AND client_id = ? AND revoked_at IS NULL",
                        principalId, clientId) });
        forgetCached(t -> principalId.equals(t.principalId()) && clientId.equals(t.clientId()));
        if (counts[0] == 0 && counts[1] == 0) {
            return false;
        }
        audit(principalId, clientId, "consent_revoked", "revoked " + counts[1] + " tokens");
        return true;
    }

    List<Map<String, Object>> auditLogs(String principalId, int limit, int offset) {
        return sql.list("SELECT id, client_id, event, detail, created_at FROM oauth_audit_logs WHERE principal_id = ? "
                + "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?", rs -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("id", rs.getString("id"));
                    m.put("client_id", rs.getString("client_id"));
                    m.put("event", rs.getString("event"));
                    m.put("detail", rs.getString("detail"));
                    m.put("created_at", Sql.instant(rs, "created_at").toString());
                    return m;
                }, principalId, limit, offset);
    }

    int auditCount(String principalId) {
        return sql.one("SELECT count(*) FROM oauth_audit_logs WHERE principal_id = ?", rs -> rs.getInt(1), principalId).orElse(0);
    }

    void audit(String principalId, String clientId, String event, String detail) {
        sql.run(c -> {
            auditIn(c, principalId, clientId, event, detail);
            return null;
        });
    }

    private static void auditIn(Connection c, String principalId, String clientId, String event, String detail) throws SQLException {
        Sql.update(c, "INSERT INTO oauth_audit_logs (id, principal_id, client_id, event, detail) VALUES (?, ?, ?, ?, ?)",
                Ids.random("oal_", 20), principalId, clientId, event, detail);
    }

    // ---------------------------------------------------------------- helpers

    static String withQuery(String uri, String... pairs) {
        StringBuilder sb = new StringBuilder(uri);
        boolean first = !uri.contains("?");
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] == null) {
                continue;
            }
            sb.append(first ? '?' : '&').append(pairs[i]).append('=')
                    .append(java.net.URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
            first = false;
        }
        return sb.toString();
    }
}
