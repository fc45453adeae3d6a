package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP server on loopback that is both an MCP server demanding OAuth (Streamable HTTP at {@code /mcp}, one tool
 * {@code whoami}) and its authorization server ({@code /as}): RFC 9728 protected resource metadata, RFC 8414 metadata,
 * RFC 7591 dynamic registration, an authorization endpoint that approves at once (PKCE S256 required, the redirect URI
 * must be the registered one), and a token endpoint for codes (verifier checked) and refresh tokens.
 */
final class OAuthMcpServer implements AutoCloseable {

    private final HttpServer server;
    final String base;
    private final Map<String, String> clients = new ConcurrentHashMap<>(); // client_id -> redirect_uri
    private final Map<String, Map<String, String>> codes = new ConcurrentHashMap<>();
    private final Set<String> accessTokens = ConcurrentHashMap.newKeySet();
    private final Map<String, String> refreshTokens = new ConcurrentHashMap<>(); // refresh -> client
    final AtomicInteger refreshes = new AtomicInteger();
    final AtomicInteger registrations = new AtomicInteger();
    volatile String lastResource;

    OAuthMcpServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        base = "http://127.0.0.1:" + server.getAddress().getPort();
        server.createContext("/mcp", this::mcp);
        server.createContext(
                "/.well-known/oauth-protected-resource/mcp",
                ex -> json(
                        ex,
                        200,
                        obj().put("resource", mcpUrl())
                                .set(
                                        "authorization_servers",
                                        Http.JSON.createArrayNode().add(issuer()))));
        server.createContext("/.well-known/oauth-authorization-server/as", ex -> {
            ObjectNode m = obj().put("issuer", issuer())
                    .put("authorization_endpoint", issuer() + "/authorize")
                    .put("token_endpoint", issuer() + "/token")
                    .put("registration_endpoint", issuer() + "/register");
            m.putArray("code_challenge_methods_supported").add("S256");
            m.putArray("response_types_supported").add("code");
            json(ex, 200, m);
        });
        server.createContext("/as/register", this::register);
        server.createContext("/as/authorize", this::authorize);
        server.createContext("/as/token", this::token);
        server.start();
    }

    String mcpUrl() {
        return base + "/mcp";
    }

    String issuer() {
        return base + "/as";
    }

    /** Every access token issued so far stops working (the client must refresh). */
    void expireAccessTokens() {
        accessTokens.clear();
    }

    boolean issued(String accessToken) {
        return accessTokens.contains(accessToken);
    }

    Set<String> accessTokens() {
        return Set.copyOf(accessTokens);
    }

    private void mcp(HttpExchange ex) throws IOException {
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (auth == null || !auth.startsWith("Bearer ") || !accessTokens.contains(auth.substring(7))) {
            ex.getResponseHeaders()
                    .set(
                            "WWW-Authenticate",
                            "Bearer resource_metadata=\"" + base + "/.well-known/oauth-protected-resource/mcp\"");
            json(ex, 401, obj().put("error", "invalid_token"));
            return;
        }
        JsonNode in = Http.JSON.readTree(ex.getRequestBody());
        if (!in.has("id")) {
            ex.sendResponseHeaders(202, -1);
            ex.close();
            return;
        }
        ObjectNode out = obj().put("jsonrpc", "2.0");
        out.set("id", in.get("id"));
        ObjectNode result = out.putObject("result");
        switch (in.path("method").asText()) {
            case "initialize" -> {
                result.put("protocolVersion", "2025-06-18");
                result.putObject("capabilities").putObject("tools");
                result.putObject("serverInfo").put("name", "locked").put("version", "1");
            }
            case "tools/list" -> {
                ObjectNode tool = result.putArray("tools")
                        .addObject()
                        .put("name", "whoami")
                        .put("description", "Says who you are.");
                tool.putObject("inputSchema").put("type", "object");
            }
            case "tools/call" ->
                result.putArray("content").addObject().put("type", "text").put("text", "you hold a valid token");
            default -> out.putObject("error").put("code", -32601).put("message", "no such method");
        }
        json(ex, 200, out);
    }

    private void register(HttpExchange ex) throws IOException {
        JsonNode in = Http.JSON.readTree(ex.getRequestBody());
        String redirect = in.path("redirect_uris").path(0).asText();
        String id = "client-" + UUID.randomUUID();
        clients.put(id, redirect);
        registrations.incrementAndGet();
        ObjectNode out = obj().put("client_id", id).put("token_endpoint_auth_method", "none");
        out.putArray("redirect_uris").add(redirect);
        json(ex, 201, out);
    }

    private void authorize(HttpExchange ex) throws IOException {
        Map<String, String> q = form(ex.getRequestURI().getRawQuery());
        String client = q.get("client_id");
        if (client == null
                || !clients.containsKey(client)
                || !clients.get(client).equals(q.get("redirect_uri"))
                || !"S256".equals(q.get("code_challenge_method"))
                || q.get("code_challenge") == null
                || !"code".equals(q.get("response_type"))) {
            json(ex, 400, obj().put("error", "invalid_request"));
            return;
        }
        lastResource = q.get("resource");
        String code = UUID.randomUUID().toString();
        codes.put(
                code,
                Map.of("client", client, "challenge", q.get("code_challenge"), "redirect", q.get("redirect_uri")));
        String location = q.get("redirect_uri") + "?code=" + code + "&state="
                + URLEncoder.encode(q.get("state"), StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Location", location);
        ex.sendResponseHeaders(302, -1);
        ex.close();
    }

    private void token(HttpExchange ex) throws IOException {
        Map<String, String> f = form(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
        String client;
        if ("authorization_code".equals(f.get("grant_type"))) {
            Map<String, String> c = codes.remove(String.valueOf(f.get("code")));
            if (c == null
                    || !c.get("client").equals(f.get("client_id"))
                    || !c.get("redirect").equals(f.get("redirect_uri"))
                    || !c.get("challenge").equals(s256(String.valueOf(f.get("code_verifier"))))) {
                json(ex, 400, obj().put("error", "invalid_grant"));
                return;
            }
            client = c.get("client");
        } else if ("refresh_token".equals(f.get("grant_type"))) {
            client = refreshTokens.remove(String.valueOf(f.get("refresh_token")));
            if (client == null || !client.equals(f.get("client_id"))) {
                json(ex, 400, obj().put("error", "invalid_grant"));
                return;
            }
            refreshes.incrementAndGet();
        } else {
            json(ex, 400, obj().put("error", "unsupported_grant_type"));
            return;
        }
        String access = "at-" + UUID.randomUUID();
        String refresh = "rt-" + UUID.randomUUID();
        accessTokens.add(access);
        refreshTokens.put(refresh, client);
        json(
                ex,
                200,
                obj().put("access_token", access)
                        .put("token_type", "Bearer")
                        .put("expires_in", 3600)
                        .put("refresh_token", refresh));
    }

    private static String s256(String verifier) {
        try {
            return Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString(
                            MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, String> form(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.put(
                        URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static ObjectNode obj() {
        return Http.JSON.createObjectNode();
    }

    private static void json(HttpExchange ex, int status, JsonNode body) throws IOException {
        byte[] b = body.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        ex.getResponseBody().write(b);
        ex.close();
    }

    static URI uri(String s) {
        return URI.create(s);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
