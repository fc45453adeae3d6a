package dev.atrium.mcp.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.Sql;
import dev.atrium.mcp.internal.McpServerStore.Server;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The OAuth client side of MCP authorization (MCP 2025-06-18 "Authorization"): on a server's 401 it reads the protected
 * resource metadata (RFC 9728, from the {@code resource_metadata} of the challenge or the well-known URL), discovers the
 * authorization server (RFC 8414, then OpenID Connect discovery), registers a client dynamically (RFC 7591, public
 * client, PKCE), and sends the user to the authorization endpoint with an S256 code challenge, the {@code resource}
 * (RFC 8707) and a {@code state} that is single use, expires after ten minutes and is bound to the server, its workspace
 * and the Principal who began. The callback exchanges the code; tokens are kept sealed ({@link TokenCipher}) and
 * refreshed when they expire. Every request goes through {@link McpClient}, so through the egress guard.
 */
@Component(service = McpOAuth.class)
public class McpOAuth {

    static final Duration STATE_TTL = Duration.ofMinutes(10);
    private static final Pattern RESOURCE_METADATA = Pattern.compile("resource_metadata=\"([^\"]+)\"");
    private static final Pattern SCOPE = Pattern.compile("scope=\"([^\"]+)\"");
    private static final String FORM = "application/x-www-form-urlencoded";

    private final McpClient client;
    private final TokenCipher cipher;
    private final McpServerStore store;
    private final SpaceDirectory spaces;
    private final Sql sql;

    @Activate
    public McpOAuth(
            @Reference McpClient client,
            @Reference TokenCipher cipher,
            @Reference McpServerStore store,
            @Reference SpaceDirectory spaces,
            @Reference DataSource dataSource) {
        this.client = client;
        this.cipher = cipher;
        this.store = store;
        this.spaces = spaces;
        this.sql = new Sql(dataSource);
    }

    record Registration(
            String serverId,
            String resource,
            String issuer,
            String authorizationEndpoint,
            String tokenEndpoint,
            String clientId,
            String clientSecret,
            String scope,
            String accessToken,
            String refreshToken,
            Instant expiresAt) {}

    private Registration registration(ResultSet rs) throws SQLException {
        Timestamp expires = rs.getTimestamp("expires_at");
        return new Registration(
                rs.getString("server_id"),
                rs.getString("resource"),
                rs.getString("issuer"),
                rs.getString("authorization_endpoint"),
                rs.getString("token_endpoint"),
                rs.getString("client_id"),
                cipher.open(rs.getString("client_secret")),
                rs.getString("scope"),
                cipher.open(rs.getString("access_token")),
                cipher.open(rs.getString("refresh_token")),
                expires == null ? null : expires.toInstant());
    }

    Optional<Registration> registration(String serverId) {
        return sql.one("SELECT * FROM mcp_oauth WHERE server_id = ?", this::registration, serverId);
    }

    /** Forgets a server's client and tokens (its URL changed: they were for another resource). */
    void forget(String serverId) {
        sql.update("DELETE FROM mcp_oauth WHERE server_id = ?", serverId);
    }

    // ------------------------------------------------------------------ beginning

    record Started(String authorizationUrl, Instant expiresAt) {}

    Started start(Server server, String principalId, String redirectUri) throws IOException, InterruptedException {
        String challenge = client.challenge(server.url(), server.transport());
        if (challenge == null) {
            throw ApiException.conflict("the MCP server does not ask for authorization");
        }
        URI serverUri = URI.create(server.url());
        JsonNode prm = protectedResourceMetadata(serverUri, challenge);
        String resource = prm.path("resource").asText("");
        if (!sameResource(resource, server.url())) {
            throw bad("the MCP server's protected resource metadata names another resource (" + resource + ")");
        }
        JsonNode servers = prm.path("authorization_servers");
        if (!servers.isArray() || servers.isEmpty() || !servers.get(0).isTextual()) {
            throw bad("the MCP server's protected resource metadata names no authorization server");
        }
        String issuer = servers.get(0).asText();
        JsonNode as = authorizationServerMetadata(issuer);
        String authorizationEndpoint = httpUrl(as, "authorization_endpoint");
        String tokenEndpoint = httpUrl(as, "token_endpoint");
        JsonNode methods = as.path("code_challenge_methods_supported");
        if (methods.isArray() && !methods.toString().contains("\"S256\"")) {
            throw bad("the authorization server does not support PKCE with S256");
        }
        Matcher scopeInChallenge = SCOPE.matcher(challenge);
        String scope = scopeInChallenge.find()
                ? scopeInChallenge.group(1)
                : prm.path("scopes_supported").isArray() ? join(prm.path("scopes_supported")) : null;

        Registration known = registration(server.id())
                .filter(r -> r.issuer().equals(issuer) && r.resource().equals(resource))
                .orElse(null);
        String clientId;
        String clientSecret;
        if (known != null && redirectUri.equals(registeredRedirect(server.id()))) {
            clientId = known.clientId();
            clientSecret = known.clientSecret();
        } else {
            String endpoint = httpUrl(as, "registration_endpoint");
            ObjectNode request = McpServerStore.JSON.createObjectNode();
            request.put("client_name", "Atrium");
            request.putArray("redirect_uris").add(redirectUri);
            request.putArray("grant_types").add("authorization_code").add("refresh_token");
            request.putArray("response_types").add("code");
            request.put("token_endpoint_auth_method", "none");
            if (scope != null) {
                request.put("scope", scope);
            }
            McpClient.Answer registered =
                    client.exchange(URI.create(endpoint), request.toString(), "application/json", "application/json");
            if (registered.status() / 100 != 2
                    || registered.json() == null
                    || !registered.json().path("client_id").isTextual()) {
                throw bad(
                        "the authorization server refused the client registration (HTTP " + registered.status() + ")");
            }
            clientId = registered.json().path("client_id").asText();
            clientSecret = registered.json().path("client_secret").isTextual()
                    ? registered.json().path("client_secret").asText()
                    : null;
        }
        sql.update(
                "INSERT INTO mcp_oauth (server_id, resource, issuer, authorization_endpoint, token_endpoint, client_id, client_secret, scope)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (server_id) DO UPDATE SET resource = excluded.resource, issuer = excluded.issuer,"
                        + " authorization_endpoint = excluded.authorization_endpoint, token_endpoint = excluded.token_endpoint,"
                        + " client_id = excluded.client_id, client_secret = excluded.client_secret, scope = excluded.scope,"
                        + " access_token = CASE WHEN mcp_oauth.client_id = excluded.client_id THEN mcp_oauth.access_token END,"
                        + " refresh_token = CASE WHEN mcp_oauth.client_id = excluded.client_id THEN mcp_oauth.refresh_token END,"
                        + " updated_at = now()",
                server.id(),
                resource,
                issuer,
                authorizationEndpoint,
                tokenEndpoint,
                clientId,
                cipher.seal(clientSecret),
                scope);

        String state = Ids.random("", 43);
        String verifier = Ids.random("", 64);
        String codeChallenge = Digests.base64Url(Digests.sha256(verifier));
        Instant expires = Instant.now().plus(STATE_TTL);
        sql.update("DELETE FROM mcp_oauth_states WHERE expires_at < now() - interval '1 day'");
        sql.update(
                "INSERT INTO mcp_oauth_states (state_hash, server_id, space_id, principal_id, code_verifier, redirect_uri, expires_at)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?)",
                Digests.sha256Base64Url(state),
                server.id(),
                server.spaceId(),
                principalId,
                cipher.seal(verifier),
                redirectUri,
                Timestamp.from(expires));
        Map<String, String> q = new LinkedHashMap<>();
        q.put("response_type", "code");
        q.put("client_id", clientId);
        q.put("redirect_uri", redirectUri);
        q.put("code_challenge", codeChallenge);
        q.put("code_challenge_method", "S256");
        q.put("state", state);
        q.put("resource", resource);
        if (scope != null) {
            q.put("scope", scope);
        }
        return new Started(
                authorizationEndpoint + (authorizationEndpoint.contains("?") ? "&" : "?") + form(q), expires);
    }

    private String registeredRedirect(String serverId) {
        return sql.one(
                        "SELECT redirect_uri FROM mcp_oauth_states WHERE server_id = ? ORDER BY expires_at DESC LIMIT 1",
                        rs -> rs.getString(1),
                        serverId)
                .orElse(null);
    }

    private JsonNode protectedResourceMetadata(URI server, String challenge) throws IOException, InterruptedException {
        List<String> candidates = new ArrayList<>();
        Matcher m = RESOURCE_METADATA.matcher(challenge);
        if (m.find()) {
            candidates.add(m.group(1));
        }
        String origin = server.getScheme() + "://" + server.getRawAuthority();
        String path = server.getRawPath() == null || server.getRawPath().equals("/") ? "" : server.getRawPath();
        if (!path.isEmpty()) {
            candidates.add(origin + "/.well-known/oauth-protected-resource" + path);
        }
        candidates.add(origin + "/.well-known/oauth-protected-resource");
        for (String c : candidates) {
            JsonNode doc = document(c);
            if (doc != null) {
                return doc;
            }
        }
        throw bad("the MCP server asks for authorization but publishes no protected resource metadata (RFC 9728)");
    }

    private JsonNode authorizationServerMetadata(String issuer) throws IOException, InterruptedException {
        URI i;
        try {
            i = new URI(issuer);
        } catch (java.net.URISyntaxException e) {
            throw bad("the authorization server's issuer is not a URL");
        }
        if (i.getScheme() == null || !i.getScheme().startsWith("http") || i.getRawAuthority() == null) {
            throw bad("the authorization server's issuer is not an http(s) URL");
        }
        String origin = i.getScheme() + "://" + i.getRawAuthority();
        String path = i.getRawPath() == null || i.getRawPath().equals("/") ? "" : i.getRawPath();
        List<String> candidates = path.isEmpty()
                ? List.of(
                        origin + "/.well-known/oauth-authorization-server",
                        origin + "/.well-known/openid-configuration")
                : List.of(
                        origin + "/.well-known/oauth-authorization-server" + path,
                        origin + "/.well-known/openid-configuration" + path,
                        origin + path + "/.well-known/openid-configuration");
        for (String c : candidates) {
            JsonNode doc = document(c);
            if (doc != null) {
                if (!issuer.equals(doc.path("issuer").asText())) {
                    throw bad("the authorization server's metadata names another issuer (RFC 8414 §3.3)");
                }
                return doc;
            }
        }
        throw bad("the authorization server publishes no metadata (RFC 8414)");
    }

    private JsonNode document(String url) throws IOException, InterruptedException {
        URI uri;
        try {
            uri = new URI(url);
        } catch (java.net.URISyntaxException e) {
            return null;
        }
        McpClient.Answer a = client.exchange(uri, null, null, "application/json");
        return a.status() == 200 && a.json() != null && a.json().isObject() ? a.json() : null;
    }

    // ------------------------------------------------------------------ the callback

    record Completed(String serverId, String spaceId) {}

    private record State(String serverId, String spaceId, String principalId, String verifier, String redirectUri) {}

    /** Refuses, as {@link #complete} would, a state that is not waiting for its callback; it is not spent. */
    void requirePending(String state) {
        if (state == null || state.isBlank() || state.length() > 200) {
            throw ApiException.badRequest("state is required");
        }
        if (sql.one(
                        "SELECT 1 FROM mcp_oauth_states WHERE state_hash = ? AND used_at IS NULL AND expires_at > now()",
                        rs -> 1,
                        Digests.sha256Base64Url(state))
                .isEmpty()) {
            throw ApiException.badRequest("the state is unknown, expired or already used");
        }
    }

    /**
     * Ends an authorization: the state is spent first (a replay finds it used), must not have expired, must be one this
     * server issued, and issued to the signed-in Principal of the callback's request; its Principal must still own
     * its workspace and the server still be there. Then the code is exchanged for tokens.
     */
    Completed complete(String state, String code, String error, Caller signedIn)
            throws IOException, InterruptedException {
        if (state == null || state.isBlank() || state.length() > 200) {
            throw ApiException.badRequest("state is required");
        }
        String hash = Digests.sha256Base64Url(state);
        // a signed-in caller other than the state's Principal is refused without spending it (its owner may still
        // finish)
        String issuedTo = sql.one(
                        "SELECT principal_id FROM mcp_oauth_states WHERE state_hash = ?", rs -> rs.getString(1), hash)
                .orElse(null);
        if (issuedTo != null && !signedIn.principalId().equals(issuedTo)) {
            throw ApiException.badRequest("the state was issued to someone else");
        }
        State s = sql.one(
                        "UPDATE mcp_oauth_states SET used_at = now() WHERE state_hash = ? AND used_at IS NULL AND expires_at > now()"
                                + " RETURNING server_id, space_id, principal_id, code_verifier, redirect_uri",
                        rs -> new State(
                                rs.getString(1),
                                rs.getString(2),
                                rs.getString(3),
                                cipher.open(rs.getString(4)),
                                rs.getString(5)),
                        hash)
                .orElseThrow(() -> ApiException.badRequest("the state is unknown, expired or already used"));
        // the Principal is still active and still owns the workspace (with its owner witness)
        if (!spaces.byId(s.spaceId())
                .map(w -> w.ownerPrincipalId().equals(s.principalId()))
                .orElse(false)) {
            throw ApiException.badRequest("the workspace of this authorization is no longer its owner's");
        }
        Server server = store.get(s.serverId())
                .filter(x -> x.spaceId().equals(s.spaceId()))
                .orElseThrow(() -> ApiException.badRequest("the MCP server of this authorization is gone"));
        if (error != null && !error.isBlank()) {
            throw ApiException.badRequest("the authorization server answered " + clip(error));
        }
        if (code == null || code.isBlank() || code.length() > 4096) {
            throw ApiException.badRequest("code is required");
        }
        Registration r = registration(server.id())
                .orElseThrow(() -> ApiException.badRequest("the MCP server's OAuth client is gone"));
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "authorization_code");
        form.put("code", code);
        form.put("redirect_uri", s.redirectUri());
        form.put("client_id", r.clientId());
        form.put("code_verifier", s.verifier());
        form.put("resource", r.resource());
        if (r.clientSecret() != null) {
            form.put("client_secret", r.clientSecret());
        }
        tokens(r, form);
        return new Completed(server.id(), server.spaceId());
    }

    /** Asks the token endpoint and keeps what it answers. */
    private String tokens(Registration r, Map<String, String> form) throws IOException, InterruptedException {
        McpClient.Answer a = client.exchange(URI.create(r.tokenEndpoint()), form(form), FORM, "application/json");
        JsonNode t = a.json();
        if (a.status() != 200 || t == null || !t.path("access_token").isTextual()) {
            String why =
                    t != null && t.path("error").isTextual() ? t.path("error").asText() : "HTTP " + a.status();
            throw new ApiException(502, "BAD_GATEWAY", "the authorization server refused: " + clip(why));
        }
        String access = t.path("access_token").asText();
        String refresh =
                t.path("refresh_token").isTextual() ? t.path("refresh_token").asText() : null;
        Instant expires = t.path("expires_in").canConvertToLong()
                ? Instant.now().plusSeconds(Math.max(0, t.path("expires_in").asLong()))
                : null;
        sql.update(
                "UPDATE mcp_oauth SET access_token = ?, refresh_token = coalesce(?, refresh_token), expires_at = ?, updated_at = now()"
                        + " WHERE server_id = ?",
                cipher.seal(access),
                cipher.seal(refresh),
                expires == null ? null : Timestamp.from(expires),
                r.serverId());
        return access;
    }

    // ------------------------------------------------------------------ using the tokens

    /** The access token to send to a server, refreshed when it has expired (or {@code force}); null when there is none. */
    String bearer(Server server, boolean force) throws IOException, InterruptedException {
        Registration r = registration(server.id()).orElse(null);
        if (r == null || r.accessToken() == null) {
            return null;
        }
        boolean expired =
                r.expiresAt() != null && r.expiresAt().isBefore(Instant.now().plusSeconds(30));
        if ((expired || force) && r.refreshToken() != null) {
            Map<String, String> form = new LinkedHashMap<>();
            form.put("grant_type", "refresh_token");
            form.put("refresh_token", r.refreshToken());
            form.put("client_id", r.clientId());
            form.put("resource", r.resource());
            if (r.clientSecret() != null) {
                form.put("client_secret", r.clientSecret());
            }
            try {
                return tokens(r, form);
            } catch (ApiException refused) {
                return force ? null : r.accessToken();
            }
        }
        return force ? null : r.accessToken();
    }

    interface Call<T> {
        T run(String bearer) throws IOException, InterruptedException;
    }

    /** Runs {@code call} with the server's token; on a 401 with a token, once more with a refreshed one. */
    <T> T withToken(Server server, Call<T> call) throws IOException, InterruptedException {
        String bearer = bearer(server, false);
        try {
            return call.run(bearer);
        } catch (McpClient.AuthorizationRequired e) {
            if (bearer == null) {
                throw e;
            }
            String fresh = bearer(server, true);
            if (fresh == null) {
                throw e;
            }
            return call.run(fresh);
        }
    }

    // ------------------------------------------------------------------ helpers

    static boolean sameResource(String resource, String serverUrl) {
        String a = strip(resource);
        String b = strip(serverUrl);
        return !a.isEmpty()
                && (a.equalsIgnoreCase(b)
                        || b.toLowerCase(java.util.Locale.ROOT).startsWith(a.toLowerCase(java.util.Locale.ROOT) + "/"));
    }

    private static String strip(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    private static String httpUrl(JsonNode doc, String field) {
        String v = doc.path(field).asText("");
        if (!(v.startsWith("https://") || v.startsWith("http://"))) {
            throw bad("the authorization server's metadata has no " + field);
        }
        return v;
    }

    private static ApiException bad(String message) {
        return new ApiException(502, "BAD_GATEWAY", message);
    }

    private static String join(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out.isEmpty() ? null : String.join(" ", out);
    }

    private static String clip(String s) {
        String c = s.replaceAll("\\p{Cntrl}", " ");
        return c.length() <= 200 ? c : c.substring(0, 200);
    }

    static String form(Map<String, String> values) {
        StringBuilder sb = new StringBuilder();
        values.forEach((k, v) -> {
            if (sb.length() > 0) {
                sb.append('&');
            }
            sb.append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                    .append('=')
                    .append(URLEncoder.encode(v, StandardCharsets.UTF_8));
        });
        return sb.toString();
    }
}
