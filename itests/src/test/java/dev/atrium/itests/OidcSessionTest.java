package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.oauth2.sdk.util.URLUtils;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a relying party learns about the user's sign-in and how it ends it (issue 42): the ID token's {@code auth_time}
 * is when the user signed in, and stays so through refreshes; {@code max_age} and {@code prompt=login} send a user
 * whose sign-in is too old back to the sign-in page; the consent page is a plain form guarded by the session's CSRF
 * token; RP-initiated logout checks its redirect and asks the user; CORS is open to public clients' origins only;
 * introspection needs client authentication. Every step runs with a real browser session (cookies), not a token.
 */
@SharedServer
class OidcSessionTest {

    private static final String REDIRECT = "http://127.0.0.1:9/cb";
    private static final String BYE = "http://127.0.0.1/bye";

    private final AtriumServer server;

    OidcSessionTest(AtriumServer server) {
        this.server = server;
    }

    private record SignedIn(Browser browser, long at) {}

    private record Client(String id, String secret) {
        String basic() {
            return "Basic "
                    + java.util.Base64.getEncoder()
                            .encodeToString((id + ":" + secret).getBytes(StandardCharsets.UTF_8));
        }
    }

    private String localUser(String prefix) {
        String name = prefix + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        Http.Reply created = server.operator()
                .post("/admin/identity/local-users", Map.of("username", name, "password", "a long password 1"));
        assertEquals(201, created.status(), created.body());
        return name;
    }

    private SignedIn signIn(Browser b, String name) {
        long before = Instant.now().getEpochSecond();
        HttpResponse<String> r = b.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + name + "&password=a+long+password+1",
                Map.of());
        assertEquals(302, r.statusCode(), r.body());
        return new SignedIn(b, before);
    }

    private Client client(Map<String, Object> extra) {
        Map<String, Object> body = new LinkedHashMap<>(Map.of(
                "client_name",
                "RP app",
                "redirect_uris",
                List.of(REDIRECT),
                "post_logout_redirect_uris",
                List.of(BYE)));
        body.putAll(extra);
        Http.Reply r = server.newUser("*").http().post("/api/me/oauth/clients", body);
        assertEquals(201, r.status(), r.body());
        JsonNode c = r.json().path("client");
        return new Client(c.path("client_id").asText(), c.path("client_secret").asText(null));
    }

    private static String authorize(Client client, String extra) {
        return "/oauth/authorize?response_type=code&scope=openid+threads%3Aread&state=st&nonce=n1&client_id="
                + client.id() + "&redirect_uri=" + URLEncoder.encode(REDIRECT, StandardCharsets.UTF_8) + extra;
    }

    /** Approves on the consent page by submitting its form as a browser without JavaScript would. */
    private static HttpResponse<String> submitConsent(Browser b, String page, String decision) {
        StringBuilder form = new StringBuilder();
        Matcher m = Pattern.compile("<input type=\"hidden\" name=\"([^\"]+)\" value=\"([^\"]*)\">")
                .matcher(page);
        while (m.find()) {
            form.append(URLEncoder.encode(unescape(m.group(1)), StandardCharsets.UTF_8))
                    .append('=')
                    .append(URLEncoder.encode(unescape(m.group(2)), StandardCharsets.UTF_8))
                    .append('&');
        }
        form.append("decision=").append(decision);
        return b.send("POST", "/oauth/authorize", "application/x-www-form-urlencoded", form.toString(), Map.of());
    }

    private static String unescape(String s) {
        return s.replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
    }

    private static String code(HttpResponse<String> redirect) {
        String location = redirect.headers()
                .firstValue("Location")
                .orElseThrow(() -> new AssertionError(redirect.statusCode() + " " + redirect.body()));
        assertTrue(location.startsWith(REDIRECT + "?"), location);
        Map<String, List<String>> q =
                URLUtils.parseParameters(URI.create(location).getRawQuery());
        assertEquals("st", q.get("state").get(0));
        assertTrue(q.containsKey("code"), location);
        return q.get("code").get(0);
    }

    private JsonNode token(Client client, String body) {
        Http.Reply r = form("/oauth/token", client.basic(), body);
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    private Http.Reply form(String path, String authorization, String body) {
        try {
            var b = java.net.http.HttpRequest.newBuilder(URI.create(server.base() + path))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body));
            if (authorization != null) {
                b.header("Authorization", authorization);
            }
            var r = java.net.http.HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Http.Reply(
                    r.statusCode(), r.body().isEmpty() ? null : Http.JSON.readTree(r.body()), r.body(), r);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static JWTClaimsSet claims(JsonNode tokens) throws Exception {
        return SignedJWT.parse(tokens.path("id_token").asText()).getJWTClaimsSet();
    }

    private static long authTime(JsonNode tokens) throws Exception {
        Object v = claims(tokens).getClaim("auth_time");
        return ((Number) v).longValue();
    }

    private static String loginReturnTo(HttpResponse<String> r) {
        assertEquals(302, r.statusCode(), r.body());
        String location = r.headers().firstValue("Location").orElseThrow();
        assertTrue(location.startsWith("/auth/login?"), "sent to sign in: " + location);
        return URLUtils.parseParameters(URI.create(location).getRawQuery())
                .get("return_to")
                .get(0);
    }

    @Test
    void theIdTokenCarriesWhenTheUserSignedInAndMaxAgeOrPromptLoginAskForAFreshSignIn() throws Exception {
        Client client = client(Map.of());
        String name = localUser("rp");
        SignedIn first = signIn(new Browser(server.base()), name);
        Browser b = first.browser();

        // the consent page is a form; approving it without the session's CSRF token is refused
        HttpResponse<String> page = b.get(authorize(client, "&max_age=60"));
        assertEquals(200, page.statusCode(), page.body());
        assertTrue(page.body().contains("<form method=\"post\" action=\"/oauth/authorize\">"), page.body());
        assertFalse(page.body().contains("max_age"), "the freshness was checked: the form does not carry it on");
        String forged = page.body()
                .replace("name=\"csrf_token\" value=\"" + b.csrf() + "\"", "name=\"csrf_token\" value=\"forged\"");
        assertEquals(403, submitConsent(b, forged, "approve").statusCode());
        HttpResponse<String> approved = submitConsent(b, page.body(), "approve");
        assertEquals(303, approved.statusCode(), approved.body());
        JsonNode tokens =
                token(client, "grant_type=authorization_code&code=" + code(approved) + "&redirect_uri=" + REDIRECT);
        long signedInAt = authTime(tokens);
        assertTrue(
                Math.abs(signedInAt - first.at()) <= 1, "auth_time " + signedInAt + " is the sign-in at " + first.at());
        assertEquals(List.of("pwd"), claims(tokens).getStringListClaim("amr"));

        Thread.sleep(2200);
        // a stored consent skips the page, and the token still says when the user signed in, not when it was made
        JsonNode again = token(
                client,
                "grant_type=authorization_code&code=" + code(b.get(authorize(client, ""))) + "&redirect_uri="
                        + REDIRECT);
        assertEquals(signedInAt, authTime(again));

        // the sign-in is 2 s old: max_age=1 and prompt=login send the user to sign in, then on without what asked for
        // it
        String back = loginReturnTo(b.get(authorize(client, "&max_age=1")));
        assertFalse(back.contains("max_age"), back);
        assertTrue(back.startsWith("/oauth/authorize?"), back);
        String backFromLogin = loginReturnTo(b.get(authorize(client, "&prompt=login")));
        assertFalse(backFromLogin.contains("prompt"), backFromLogin);
        HttpResponse<String> none = b.get(authorize(client, "&prompt=none&max_age=1"));
        assertTrue(
                none.headers().firstValue("Location").orElseThrow().contains("error=login_required"),
                "prompt=none never shows a page");

        SignedIn second = signIn(b, name);
        JsonNode fresh =
                token(client, "grant_type=authorization_code&code=" + code(b.get(back)) + "&redirect_uri=" + REDIRECT);
        long freshAt = authTime(fresh);
        assertTrue(freshAt >= second.at() && freshAt > signedInAt, "the new sign-in's time: " + freshAt);

        // OIDC Core 12.2: a refreshed ID token keeps the original sign-in's auth_time
        Thread.sleep(1100);
        JsonNode refreshed = token(
                client,
                "grant_type=refresh_token&refresh_token="
                        + fresh.path("refresh_token").asText());
        assertEquals(freshAt, authTime(refreshed));
        assertNotEquals(
                fresh.path("id_token").asText(), refreshed.path("id_token").asText());
        assertEquals(List.of("pwd"), claims(refreshed).getStringListClaim("amr"));

        Http.Reply badAge = server.anonymous().send("GET", authorize(client, "&max_age=soon"), null, "text/html");
        assertTrue(badAge.raw().headers().firstValue("Location").orElseThrow().contains("error=invalid_request"));
    }

    /**
     * RP-initiated logout: an unregistered post-logout URI is refused without a redirect; with a session the user
     * confirms on a page (an ID token hint is no proof of intent), the session ends, and the browser lands on the
     * registered URI with the state; without a session the redirect is immediate.
     */
    @Test
    void rpInitiatedLogoutAsksTheUserEndsTheSessionAndReturnsToTheRegisteredUri() throws Exception {
        Client client = client(Map.of());
        Browser b = signIn(new Browser(server.base()), localUser("bye")).browser();
        HttpResponse<String> page = b.get(authorize(client, ""));
        JsonNode tokens = token(
                client,
                "grant_type=authorization_code&code=" + code(submitConsent(b, page.body(), "approve"))
                        + "&redirect_uri=" + REDIRECT);
        String hint = tokens.path("id_token").asText();
        String bye =
                "http://127.0.0.1:47001/bye"; // RFC 8252 §7.3: a loopback URI registered without a port, on any port

        HttpResponse<String> elsewhere = b.get("/oauth/end_session?id_token_hint=" + hint + "&post_logout_redirect_uri="
                + URLEncoder.encode("https://evil.example/bye", StandardCharsets.UTF_8));
        assertEquals(400, elsewhere.statusCode());
        assertTrue(elsewhere.headers().firstValue("Location").isEmpty());
        assertEquals(
                400,
                b.get("/oauth/end_session?id_token_hint=" + hint.substring(0, hint.length() - 4) + "AAAA")
                        .statusCode(),
                "a hint whose signature fails");

        HttpResponse<String> confirm = b.get("/oauth/end_session?id_token_hint=" + hint
                + "&state=s9&post_logout_redirect_uri=" + URLEncoder.encode(bye, StandardCharsets.UTF_8));
        assertEquals(200, confirm.statusCode(), confirm.body());
        assertEquals(200, b.get("/api/me").statusCode(), "asking is not signing out");
        Matcher returnTo =
                Pattern.compile("name=\"return_to\" value=\"([^\"]+)\"").matcher(confirm.body());
        assertTrue(returnTo.find(), confirm.body());
        assertEquals(
                403,
                b.send(
                                "POST",
                                "/auth/logout",
                                "application/x-www-form-urlencoded",
                                "csrf_token=forged&return_to=/",
                                Map.of())
                        .statusCode(),
                "a sign-out form needs the session's CSRF token");
        HttpResponse<String> out = b.send(
                "POST",
                "/auth/logout",
                "application/x-www-form-urlencoded",
                "csrf_token=" + b.csrf() + "&return_to="
                        + URLEncoder.encode(unescape(returnTo.group(1)), StandardCharsets.UTF_8),
                Map.of());
        assertEquals(303, out.statusCode(), out.body());
        HttpResponse<String> done = b.get(out.headers().firstValue("Location").orElseThrow());
        assertEquals(302, done.statusCode(), done.body());
        assertEquals(bye + "?state=s9", done.headers().firstValue("Location").orElseThrow());
        assertEquals(401, b.get("/api/me").statusCode(), "the session ended");

        HttpResponse<String> signedOut = new Browser(server.base())
                .get("/oauth/end_session?client_id=" + client.id() + "&state=s10" + "&post_logout_redirect_uri="
                        + URLEncoder.encode(BYE, StandardCharsets.UTF_8));
        assertEquals(302, signedOut.statusCode());
        assertEquals(
                BYE + "?state=s10", signedOut.headers().firstValue("Location").orElseThrow());

        JsonNode discovery =
                server.anonymous().get("/.well-known/openid-configuration").json();
        assertEquals(
                server.base() + "/oauth/end_session",
                discovery.path("end_session_endpoint").asText());
        assertTrue(discovery.path("prompt_values_supported").toString().contains("login"));
    }

    /**
     * CORS: the metadata and keys for anyone; token, UserInfo and revocation for the origins of registered public
     * clients (a loopback one on any port), never with credentials; nothing for other origins or for the API.
     */
    @Test
    void browsersOfRegisteredPublicClientsMayCallTheTokenAndUserInfoEndpoints() throws Exception {
        client(Map.of(
                "redirect_uris",
                List.of("http://127.0.0.1/spa", "https://spa.example/cb"),
                "token_endpoint_auth_method",
                "none"));
        for (String origin : List.of("http://127.0.0.1:47002", "https://spa.example")) {
            for (String path : List.of("/oauth/token", "/oauth/userinfo", "/oauth/revoke")) {
                HttpResponse<String> pre = new Browser(server.base())
                        .send(
                                "OPTIONS",
                                path,
                                null,
                                null,
                                Map.of(
                                        "Origin",
                                        origin,
                                        "Access-Control-Request-Method",
                                        "POST",
                                        "Access-Control-Request-Headers",
                                        "authorization, content-type"));
                assertEquals(204, pre.statusCode(), path + " " + pre.body());
                assertEquals(
                        origin,
                        pre.headers().firstValue("Access-Control-Allow-Origin").orElse(null),
                        path);
                assertTrue(
                        pre.headers()
                                .firstValue("Access-Control-Allow-Headers")
                                .orElse("")
                                .contains("Authorization"),
                        path);
                assertTrue(
                        pre.headers()
                                .firstValue("Access-Control-Allow-Credentials")
                                .isEmpty(),
                        path);
            }
        }
        HttpResponse<String> token = new Browser(server.base())
                .send(
                        "POST",
                        "/oauth/token",
                        "application/x-www-form-urlencoded",
                        "grant_type=authorization_code&code=x&client_id=nobody",
                        Map.of("Origin", "https://spa.example"));
        assertEquals(
                "https://spa.example",
                token.headers().firstValue("Access-Control-Allow-Origin").orElse(null),
                "an error the app must be able to read: " + token.body());
        for (String stranger :
                List.of("https://evil.example", "https://spa.example.evil.example", "http://localhost:47002")) {
            HttpResponse<String> pre = new Browser(server.base())
                    .send(
                            "OPTIONS",
                            "/oauth/token",
                            null,
                            null,
                            Map.of("Origin", stranger, "Access-Control-Request-Method", "POST"));
            assertNull(pre.headers().firstValue("Access-Control-Allow-Origin").orElse(null), stranger);
        }
        HttpResponse<String> api = new Browser(server.base())
                .send(
                        "OPTIONS",
                        "/api/me",
                        null,
                        null,
                        Map.of("Origin", "https://spa.example", "Access-Control-Request-Method", "GET"));
        assertNull(api.headers().firstValue("Access-Control-Allow-Origin").orElse(null), "the API has no CORS");
        HttpResponse<String> authorizePage = new Browser(server.base())
                .send("GET", "/oauth/authorize", null, null, Map.of("Origin", "https://spa.example"));
        assertNull(
                authorizePage
                        .headers()
                        .firstValue("Access-Control-Allow-Origin")
                        .orElse(null),
                "nor the pages");
        for (String path : List.of("/.well-known/openid-configuration", "/.well-known/jwks.json")) {
            HttpResponse<String> open = new Browser(server.base())
                    .send("GET", path, null, null, Map.of("Origin", "https://anyone.example"));
            assertEquals(
                    "*",
                    open.headers().firstValue("Access-Control-Allow-Origin").orElse(null),
                    path);
        }
    }

    @Test
    void introspectionNeedsAClientThatAuthenticates() {
        Client pub = client(Map.of("token_endpoint_auth_method", "none"));
        Http.Reply r = form("/oauth/introspect", null, "token=ato_anything&client_id=" + pub.id());
        assertEquals(401, r.status(), r.body());
        assertEquals("invalid_client", r.json().path("error").asText());
    }
}
