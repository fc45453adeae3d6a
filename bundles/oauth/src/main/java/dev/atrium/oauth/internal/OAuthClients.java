package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The registered clients: registration metadata rules, registration (by a user or dynamically), the owner's reads
 * and changes, and client authentication at the token, introspection, revocation and device endpoints.
 */
@Component(service = OAuthClients.class)
public class OAuthClients {

    private final Sql sql;
    private final IssuedTokens tokens;
    private final OAuthAuditLog audit;

    @Activate
    public OAuthClients(
            @Reference DataSource dataSource, @Reference IssuedTokens tokens, @Reference OAuthAuditLog audit) {
        this.sql = new Sql(dataSource);
        this.tokens = tokens;
        this.audit = audit;
    }

    record ClientSpec(
            String name,
            List<String> redirectUris,
            Set<String> grantTypes,
            Set<String> scopes,
            String authMethod,
            String clientUri,
            String logoUri,
            List<String> postLogoutRedirectUris,
            String tosUri,
            String policyUri) {}

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
            if (!OAuthServer.GRANT_TYPES.contains(g)) {
                throw invalid.apply("unsupported grant type '" + g + "'");
            }
        }
        if (!OAuthServer.AUTH_METHODS.contains(spec.authMethod())) {
            throw invalid.apply(
                    "token_endpoint_auth_method must be one of client_secret_basic, client_secret_post, none");
        }
        if ("none".equals(spec.authMethod()) && spec.grantTypes().contains("client_credentials")) {
            throw invalid.apply("a public client cannot use client_credentials");
        }
        if (spec.redirectUris().size() > MAX_REDIRECT_URIS) {
            throw invalid.apply("redirect_uris may hold at most " + MAX_REDIRECT_URIS + " URIs");
        }
        if (spec.authMethod() != null && spec.authMethod().length() > 100) {
            throw invalid.apply(
                    "token_endpoint_auth_method must be one of client_secret_basic, client_secret_post, none");
        }
        if (spec.grantTypes().contains("authorization_code")
                && spec.redirectUris().isEmpty()) {
            throw invalid.apply("redirect_uris must name at least one URI for the authorization_code grant");
        }
        if (spec.postLogoutRedirectUris().size() > MAX_REDIRECT_URIS) {
            throw invalid.apply("post_logout_redirect_uris may hold at most " + MAX_REDIRECT_URIS + " URIs");
        }
        List<String> all = new ArrayList<>(spec.redirectUris());
        all.addAll(spec.postLogoutRedirectUris());
        for (String u : all) {
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
        checkLinks("client_uri and logo_uri", invalid, spec.clientUri(), spec.logoUri());
        checkLinks("tos_uri and policy_uri", invalid, spec.tosUri(), spec.policyUri());
        if (spec.scopes().isEmpty()) {
            throw invalid.apply("scope must name at least one scope");
        }
    }

    private static void checkLinks(
            String names, java.util.function.Function<String, RuntimeException> invalid, String... links) {
        for (String u : links) {
            if (u != null && u.length() > 2000) {
                throw invalid.apply(names + " must be at most 2000 characters");
            }
            if (u != null && !u.isEmpty() && !(u.startsWith("https://") || u.startsWith("http://"))) {
                throw invalid.apply(names + " must be http(s) URLs: " + u);
            }
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
            boolean loopback =
                    host.equals("127.0.0.1") || host.equals("[::1]") || host.equals("::1") || host.equals("localhost");
            return loopback ? null : "redirect_uris: plain http is allowed on loopback hosts only; use https";
        }
        if (scheme.contains(".")) {
            return null;
        }
        return "redirect_uris must use https, http on a loopback host, or a reverse-domain private-use scheme";
    }

    Registered register(String ownerPrincipalId, ClientSpec spec, boolean dynamic) {
        return register(ownerPrincipalId, spec, dynamic, dynamic ? "dynamic registration" : null);
    }

    /** Registers a checked {@code spec}; {@code auditDetail} says in the owner's log how the client came to be. */
    Registered register(String ownerPrincipalId, ClientSpec spec, boolean dynamic, String auditDetail) {
        String clientId = Ids.random("atc_", 24);
        String secret = "none".equals(spec.authMethod()) ? null : newSecret();
        String registrationToken = dynamic ? Ids.random("atg_", 40) : null;
        Client client = sql.one(
                        "INSERT INTO oauth_clients (client_id, secret_hash, owner_principal_id, client_name, redirect_uris, "
                                + "grant_types, scopes, token_endpoint_auth_method, client_uri, logo_uri, registration_token_hash, "
                                + "post_logout_redirect_uris, tos_uri, policy_uri) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + Client.COLUMNS,
                        Client::of,
                        clientId,
                        secret == null ? null : Digests.sha256(secret),
                        ownerPrincipalId,
                        spec.name().trim(),
                        String.join("\n", spec.redirectUris()),
                        ScopeSet.join(spec.grantTypes()),
                        ScopeSet.join(spec.scopes()),
                        spec.authMethod(),
                        spec.clientUri(),
                        spec.logoUri(),
                        registrationToken == null ? null : Digests.sha256(registrationToken),
                        String.join("\n", spec.postLogoutRedirectUris()),
                        spec.tosUri(),
                        spec.policyUri())
                .orElseThrow();
        audit.audit(ownerPrincipalId, clientId, "client_created", auditDetail);
        return new Registered(client, secret, registrationToken);
    }

    private static String newSecret() {
        return Ids.random("atcs_", 40);
    }

    /**
     * Client authentication reads clients through a cache of a few seconds: the token and introspection endpoints
     * are the hot path. This instance drops an entry when the client changes; another instance may accept a
     * deleted client or an old secret for at most {@link #CLIENT_CACHE}.
     */
    private static final Duration CLIENT_CACHE = Duration.ofSeconds(5);

    private final java.util.concurrent.ConcurrentHashMap<String, CachedClient> clientCache =
            new java.util.concurrent.ConcurrentHashMap<>();

    private record CachedClient(Optional<Client> client, Instant at) {}

    /** The client, from the cache unless {@code reread}. */
    private Optional<Client> cachedClient(String clientId, boolean reread) {
        CachedClient c = reread ? null : clientCache.get(clientId == null ? "" : clientId);
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
        return sql.one(
                "SELECT " + Client.COLUMNS + " FROM oauth_clients WHERE client_id = ? AND registration_token_hash = ?",
                Client::of,
                clientId,
                Digests.sha256(token));
    }

    List<Client> owned(String principalId) {
        return sql.list(
                "SELECT " + Client.COLUMNS
                        + " FROM oauth_clients WHERE owner_principal_id = ? ORDER BY created_at, client_id",
                Client::of,
                principalId);
    }

    Client ownedClient(String principalId, String clientId) {
        return client(clientId)
                .filter(c -> principalId.equals(c.ownerPrincipalId()))
                .orElseThrow(() -> ApiException.notFound("OAuth client not found"));
    }

    Client update(
            String principalId,
            String clientId,
            String name,
            List<String> redirectUris,
            Set<String> scopes,
            String clientUri,
            String logoUri,
            List<String> postLogoutRedirectUris) {
        Client c = ownedClient(principalId, clientId);
        ClientSpec spec = new ClientSpec(
                name == null ? c.name() : name,
                redirectUris == null ? c.redirectUris() : redirectUris,
                c.grantTypes(),
                scopes == null ? c.scopes() : scopes,
                c.authMethod(),
                clientUri == null ? c.clientUri() : clientUri,
                logoUri == null ? c.logoUri() : logoUri,
                postLogoutRedirectUris == null ? c.postLogoutRedirectUris() : postLogoutRedirectUris,
                c.tosUri(),
                c.policyUri());
        checkSpec(spec, ApiException::badRequest);
        Client updated = sql.one(
                        "UPDATE oauth_clients SET client_name = ?, redirect_uris = ?, scopes = ?, client_uri = ?, logo_uri = ?, "
                                + "post_logout_redirect_uris = ?, updated_at = now() WHERE client_id = ? RETURNING "
                                + Client.COLUMNS,
                        Client::of,
                        spec.name().trim(),
                        String.join("\n", spec.redirectUris()),
                        ScopeSet.join(spec.scopes()),
                        spec.clientUri(),
                        spec.logoUri(),
                        String.join("\n", spec.postLogoutRedirectUris()),
                        clientId)
                .orElseThrow();
        clientCache.remove(clientId);
        audit.audit(principalId, clientId, "client_updated", null);
        return updated;
    }

    /**
     * Replaces the metadata of a client of {@code principalId} that an app's manifest declares (names, redirect URIs,
     * scopes, links), with a checked {@code spec}; its grants, authentication method, client_uri and secret stay.
     */
    Optional<Client> replaceOwned(String principalId, String clientId, ClientSpec spec) {
        if (principalId == null || clientId == null) {
            return Optional.empty();
        }
        Optional<Client> updated = sql.one(
                "UPDATE oauth_clients SET client_name = ?, redirect_uris = ?, scopes = ?, logo_uri = ?, tos_uri = ?, "
                        + "policy_uri = ?, updated_at = now() WHERE client_id = ? AND owner_principal_id = ? RETURNING "
                        + Client.COLUMNS,
                Client::of,
                spec.name().trim(),
                String.join("\n", spec.redirectUris()),
                ScopeSet.join(spec.scopes()),
                spec.logoUri(),
                spec.tosUri(),
                spec.policyUri(),
                clientId,
                principalId);
        if (updated.isPresent()) {
            clientCache.remove(clientId);
            audit.audit(principalId, clientId, "client_updated", null);
        }
        return updated;
    }

    /**
     * A new secret for a confidential client of {@code principalId}; the one it replaces keeps authenticating until
     * {@code previousUntil} (a secret from an earlier rotation stops now). Empty for a public client or another's.
     */
    Optional<Registered> rotateSecret(String principalId, String clientId, Instant previousUntil) {
        if (principalId == null || clientId == null) {
            return Optional.empty();
        }
        String secret = newSecret();
        // the right-hand sides read the row as it was: the previous hash is the one being replaced
        Optional<Client> rotated = sql.one(
                "UPDATE oauth_clients SET previous_secret_hash = secret_hash, previous_secret_expires_at = ?, "
                        + "secret_hash = ?, updated_at = now() WHERE client_id = ? AND owner_principal_id = ? "
                        + "AND token_endpoint_auth_method <> 'none' RETURNING " + Client.COLUMNS,
                Client::of,
                previousUntil,
                Digests.sha256(secret),
                clientId,
                principalId);
        if (rotated.isEmpty()) {
            return Optional.empty();
        }
        clientCache.remove(clientId);
        audit.audit(principalId, clientId, "client_secret_rotated", null);
        return Optional.of(new Registered(rotated.get(), secret, null));
    }

    void delete(String principalId, String clientId) {
        if (!deleteOwned(principalId, clientId)) {
            throw ApiException.notFound("OAuth client not found");
        }
    }

    /**
     * Deletes a client of {@code principalId}, and with it (by the schema's cascades) its codes, tokens and consents;
     * false when there is no such client of that Principal.
     */
    boolean deleteOwned(String principalId, String clientId) {
        if (principalId == null || clientId == null) {
            return false;
        }
        if (sql.update(
                        "DELETE FROM oauth_clients WHERE client_id = ? AND owner_principal_id = ?",
                        clientId,
                        principalId)
                == 0) {
            return false;
        }
        clientCache.remove(clientId);
        tokens.forgetCached(t -> clientId.equals(t.clientId()));
        audit.audit(principalId, clientId, "client_deleted", null);
        return true;
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
                decoded = new String(
                        Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
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
            if ((bodyClientId != null && !bodyClientId.equals(basicId)) || bodySecret != null) {
                throw OAuthError.invalidRequest("send the client credentials in one way only");
            }
            clientId = basicId;
            basic = true;
        }
        if (clientId == null || clientId.isBlank()) {
            throw OAuthError.invalidClient("client authentication failed: no client_id");
        }
        Client client = cachedClient(clientId, false)
                .orElseThrow(() -> OAuthError.invalidClient("client authentication failed"));
        if (!client.isPublic() && !client.secretMatches(secret, Instant.now())) {
            // a secret rotated on another instance is not in this one's cache yet: read the client again before
            // refusing,
            // so that an app's new secret works at once everywhere
            client = cachedClient(clientId, true)
                    .orElseThrow(() -> OAuthError.invalidClient("client authentication failed"));
        }
        if (client.isPublic()) {
            if (secret != null && !secret.isEmpty()) {
                throw OAuthError.invalidClient("client authentication failed");
            }
            return client;
        }
        if (!client.secretMatches(secret, Instant.now())) {
            throw OAuthError.invalidClient("client authentication failed");
        }
        if ((!basic && "client_secret_basic".equals(client.authMethod()))
                || (basic && "client_secret_post".equals(client.authMethod()))) {
            // RFC 7591 names one method per client; both are accepted so that any standard client library works
        }
        return client;
    }

    private static String urlDecode(String s) {
        return java.net.URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
