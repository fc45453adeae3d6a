package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.oauth2.sdk.util.URLUtils;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import no.nav.security.mock.oauth2.MockOAuth2Server;
import no.nav.security.mock.oauth2.token.DefaultOAuth2TokenCallback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Browser sign-in against a real OpenID Connect provider in the test ({@code mock-oauth2-server} on loopback), the
 * local password provider, sessions, CSRF and account links.
 */
@SharedServer
class LoginTest {

    private static MockOAuth2Server idp;
    private static String suffix;

    private final AtriumServer server;

    LoginTest(AtriumServer server) {
        this.server = server;
    }

    @BeforeAll
    static void startProvider() throws Exception {
        idp = new MockOAuth2Server();
        idp.start(InetAddress.getByName("127.0.0.1"), 0);
        suffix = Long.toString(System.nanoTime() % 1_000_000, 36);
    }

    @AfterAll
    static void stopProvider() {
        if (idp != null) {
            idp.shutdown();
        }
    }

    /** Registers {@code issuerId} of the mock provider as provider {@code name} (idempotent). */
    private void provider(String name, String issuerId) {
        Http.Reply r = server.operator()
                .put(
                        "/admin/identity/providers/" + name,
                        Map.of(
                                "issuer",
                                idp.issuerUrl(issuerId).toString(),
                                "client_id",
                                "atrium-" + name,
                                "client_secret",
                                "s3cret"));
        assertEquals(200, r.status(), r.body());
    }

    /** A full login at the mock provider as {@code subject}; returns the callback's answer. */
    private HttpResponse<String> login(Browser b, String provider, String issuerId, String subject, String username) {
        idp.enqueueCallback(new DefaultOAuth2TokenCallback(
                issuerId,
                subject,
                "JWT",
                null,
                username == null ? Map.of() : Map.of("preferred_username", username, "name", "Name " + username)));
        HttpResponse<String> start = b.get("/auth/login?provider=" + provider + "&return_to=/welcome");
        assertEquals(302, start.statusCode(), start.body());
        String authorize = start.headers().firstValue("Location").orElseThrow();
        assertTrue(authorize.startsWith(idp.issuerUrl(issuerId).toString()), authorize);
        Map<String, List<String>> q =
                URLUtils.parseParameters(URI.create(authorize).getRawQuery());
        assertEquals("S256", q.get("code_challenge_method").get(0));
        assertNotNull(q.get("nonce"));
        HttpResponse<String> atIdp = b.get(authorize);
        assertEquals(302, atIdp.statusCode(), atIdp.body());
        return b.get(atIdp.headers().firstValue("Location").orElseThrow());
    }

    private static String user(String base) {
        return base + suffix;
    }

    @Test
    void firstLoginCreatesThePrincipalAndItsWorkspaceAndTheSameSubjectComesBackToIt() {
        provider("mock", "idp-a");
        Browser b = new Browser(server.base());
        HttpResponse<String> done = login(b, "mock", "idp-a", "subject-first-" + suffix, user("ann"));
        assertEquals(302, done.statusCode(), done.body());
        assertEquals("/welcome", done.headers().firstValue("Location").orElseThrow());
        String cookie = Browser.setCookie(done, "atrium_session");
        assertNotNull(cookie);
        assertTrue(cookie.contains("HttpOnly"), cookie);
        assertTrue(cookie.contains("SameSite=Lax"), cookie);
        assertTrue(cookie.contains("Path=/"), cookie);
        assertFalse(cookie.contains("Secure"), "no Secure flag over plain http: " + cookie);

        HttpResponse<String> me = b.get("/api/me");
        assertEquals(200, me.statusCode(), me.body());
        assertTrue(me.body().contains("\"username\":\"" + user("ann") + "\""), me.body());
        HttpResponse<String> space = b.get("/api/me/personal-space");
        assertEquals(200, space.statusCode(), space.body());
        assertTrue(space.body().contains("\"is_default\":true"), space.body());
        HttpResponse<String> session = b.get("/auth/external/session");
        assertEquals(200, session.statusCode());
        assertTrue(session.body().contains("\"authenticated\":true"));

        // the same subject again, in another browser: the same Principal, no second workspace
        Browser again = new Browser(server.base());
        assertEquals(
                302,
                login(again, "mock", "idp-a", "subject-first-" + suffix, "someone-else")
                        .statusCode());
        assertEquals(me.body(), again.get("/api/me").body());
        assertEquals(space.body(), again.get("/api/me/personal-space").body());
        assertEquals(401, new Browser(server.base()).get("/api/me").statusCode());
        assertEquals(
                401, new Browser(server.base()).get("/auth/external/session").statusCode());
    }

    @Test
    void logingInAgainRotatesTheSessionAndLogoutEndsIt() {
        provider("mock", "idp-a");
        Browser b = new Browser(server.base());
        login(b, "mock", "idp-a", "subject-rotate-" + suffix, null);
        String first = b.cookies.get("atrium_session");
        assertEquals(200, b.get("/api/me").statusCode());
        login(b, "mock", "idp-a", "subject-rotate-" + suffix, null);
        String second = b.cookies.get("atrium_session");
        assertNotEquals(first, second);
        Browser stale = new Browser(server.base());
        stale.cookies.put("atrium_session", first);
        assertEquals(401, stale.get("/api/me").statusCode(), "the session before login ends");

        HttpResponse<String> out =
                b.send("POST", "/api/auth/logout", "application/json", "{}", Map.of("X-CSRF-Token", b.csrf()));
        assertEquals(200, out.statusCode(), out.body());
        Browser after = new Browser(server.base());
        after.cookies.put("atrium_session", second);
        assertEquals(401, after.get("/api/me").statusCode());
    }

    @Test
    void cookieAuthenticatedChangesNeedTheCsrfToken() {
        provider("mock", "idp-a");
        Browser b = new Browser(server.base());
        login(b, "mock", "idp-a", "subject-csrf-" + suffix, null);
        HttpResponse<String> me = b.get("/api/auth/me");
        assertEquals(200, me.statusCode());
        assertTrue(
                me.body().contains("\"setup_completed\":false"),
                "no preferred_username: the user picks one: " + me.body());

        HttpResponse<String> forged = b.send(
                "POST",
                "/api/auth/setup-username",
                "application/json",
                "{\"username\":\"" + user("csrf") + "\"}",
                Map.of());
        assertEquals(403, forged.statusCode(), forged.body());
        assertTrue(forged.body().contains("CSRF"), forged.body());
        HttpResponse<String> wrong = b.send(
                "PATCH",
                "/api/auth/profile",
                "application/json",
                "{\"name\":\"X\"}",
                Map.of("X-CSRF-Token", "not-the-token"));
        assertEquals(403, wrong.statusCode());

        HttpResponse<String> ok = b.send(
                "POST",
                "/api/auth/setup-username",
                "application/json",
                "{\"username\":\"" + user("csrf") + "\"}",
                Map.of("X-CSRF-Token", b.csrf()));
        assertEquals(200, ok.statusCode(), ok.body());
        assertTrue(ok.body().contains("\"setup_completed\":true"));
        HttpResponse<String> profile = b.send(
                "PATCH",
                "/api/auth/profile",
                "application/json",
                "{\"name\":\"Display Name\",\"picture\":\"https://example.org/a.png\"}",
                Map.of("X-CSRF-Token", b.csrf()));
        assertEquals(200, profile.statusCode(), profile.body());
        assertTrue(b.get("/api/me").body().contains("Display Name"));
    }

    @Test
    void aCodeFromAnotherLoginIsRefused() throws Exception {
        provider("mock", "idp-a");
        Browser b = new Browser(server.base());
        HttpResponse<String> first = b.get("/auth/login?provider=mock");
        HttpResponse<String> second = b.get("/auth/login?provider=mock");
        String firstState = URLUtils.parseParameters(
                        URI.create(first.headers().firstValue("Location").orElseThrow())
                                .getRawQuery())
                .get("state")
                .get(0);
        idp.enqueueCallback(new DefaultOAuth2TokenCallback("idp-a", "subject-nonce-" + suffix));
        HttpResponse<String> atIdp =
                b.get(second.headers().firstValue("Location").orElseThrow());
        String code = URLUtils.parseParameters(
                        URI.create(atIdp.headers().firstValue("Location").orElseThrow())
                                .getRawQuery())
                .get("code")
                .get(0);
        // the second login's code delivered with the first login's state: its PKCE verifier and nonce do not fit
        // (the browser-binding cookie names the first flow, so the check that refuses is the verifier's and nonce's)
        b.cookies.put(
                "atrium_signin_flow",
                java.util.Base64.getUrlEncoder()
                        .withoutPadding()
                        .encodeToString(java.security.MessageDigest.getInstance("SHA-256")
                                .digest(firstState.getBytes(StandardCharsets.UTF_8))));
        HttpResponse<String> swapped = b.get("/auth/callback?code=" + code + "&state=" + firstState);
        assertEquals(401, swapped.statusCode(), swapped.body());
        assertFalse(b.cookies.containsKey("atrium_session"));
    }

    @Test
    void aTamperedIdTokenIsRefused() throws Exception {
        try (EvilProvider evil = new EvilProvider()) {
            Http.Reply r = server.operator()
                    .put(
                            "/admin/identity/providers/evil",
                            Map.of("issuer", evil.issuer(), "client_id", "atrium-evil", "client_secret", "x"));
            assertEquals(200, r.status(), r.body());

            Browser honest = new Browser(server.base());
            HttpResponse<String> ok = evil.login(honest, false);
            assertEquals(302, ok.statusCode(), "an untampered token signs in: " + ok.body());
            assertEquals(200, honest.get("/api/me").statusCode());

            Browser b = new Browser(server.base());
            HttpResponse<String> refused = evil.login(b, true);
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("signature"), refused.body());
            assertFalse(b.cookies.containsKey("atrium_session"));
        }
    }

    @Test
    void anIdTokenWithTheWrongNonceIsRefused() throws Exception {
        try (EvilProvider evil = new EvilProvider()) {
            server.operator()
                    .put("/admin/identity/providers/evil", Map.of("issuer", evil.issuer(), "client_id", "atrium-evil"));
            evil.wrongNonce = true;
            Browser b = new Browser(server.base());
            HttpResponse<String> refused = evil.login(b, false);
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("nonce"), refused.body());
            assertFalse(b.cookies.containsKey("atrium_session"));
        }
    }

    @Test
    void linkingASubjectThatAlreadyHasAPrincipalIsAConflict() {
        provider("mock", "idp-a");
        provider("mock-b", "idp-b");
        Browser x = new Browser(server.base());
        login(x, "mock", "idp-a", "subject-link-x-" + suffix, null);
        Browser y = new Browser(server.base());
        login(y, "mock-b", "idp-b", "subject-link-y-" + suffix, user("yan"));

        // y tries to attach x's subject at provider "mock"
        HttpResponse<String> conflict = link(y, "mock", "idp-a", "subject-link-x-" + suffix);
        assertEquals(409, conflict.statusCode(), conflict.body());
        assertTrue(conflict.body().contains("CONFLICT"));

        // a subject nobody has yet is attached, and then signs y in
        HttpResponse<String> linked = link(y, "mock", "idp-a", "subject-link-new-" + suffix);
        assertEquals(302, linked.statusCode(), linked.body());
        Browser z = new Browser(server.base());
        login(z, "mock", "idp-a", "subject-link-new-" + suffix, null);
        assertTrue(z.get("/api/me").body().contains("\"username\":\"" + user("yan") + "\""));
        HttpResponse<String> links = y.get("/api/auth/links");
        assertTrue(links.body().contains("subject-link-new-" + suffix), links.body());
    }

    private HttpResponse<String> link(Browser b, String provider, String issuerId, String subject) {
        idp.enqueueCallback(new DefaultOAuth2TokenCallback(issuerId, subject));
        HttpResponse<String> start = b.get("/auth/link/" + provider);
        assertEquals(302, start.statusCode(), start.body());
        HttpResponse<String> atIdp =
                b.get(start.headers().firstValue("Location").orElseThrow());
        String callback = atIdp.headers().firstValue("Location").orElseThrow();
        assertTrue(callback.contains("/auth/link/" + provider + "/callback"), callback);
        return b.get(callback);
    }

    @Test
    void localUsersSignInWithAPassword() {
        String name = user("loc");
        Http.Reply created = server.operator().post("/admin/identity/local-users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        String password = created.json().path("password").asText();
        assertTrue(password.length() >= 16);
        Browser b = new Browser(server.base());
        assertEquals(200, b.get("/auth/login?provider=local").statusCode());
        HttpResponse<String> wrong = b.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + name + "&password=wrong-password",
                Map.of());
        assertEquals(401, wrong.statusCode());
        HttpResponse<String> ok = b.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + name + "&password=" + password + "&return_to=/x",
                Map.of("X-Forwarded-Proto", "https"));
        assertEquals(302, ok.statusCode(), ok.body());
        assertTrue(Browser.setCookie(ok, "atrium_session").contains("Secure"), "Secure when served over https");
        assertTrue(b.get("/api/me").body().contains("\"username\":\"" + name + "\""));
        Http.Reply again = server.operator()
                .post("/admin/identity/local-users", Map.of("username", name, "password", "another-password"));
        assertEquals(409, again.status());
    }

    /**
     * A browser's EventSource and WebSocket cannot send an Authorization header: the run streams accept the session
     * cookie, as JAX-RS routes do, but never for a script of another site.
     */
    @Test
    void aBrowserSessionReadsItsRunsEventStreamButNotFromAnotherSite() throws Exception {
        String name = user("sse");
        Http.Reply created = server.operator().post("/admin/identity/local-users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        Browser b = new Browser(server.base());
        b.get("/auth/login?provider=local");
        assertEquals(
                302,
                b.send(
                                "POST",
                                "/auth/login/local",
                                "application/x-www-form-urlencoded",
                                "username=" + name + "&password="
                                        + created.json().path("password").asText(),
                                Map.of())
                        .statusCode());
        Map<String, String> csrf = Map.of("X-CSRF-Token", b.csrf());
        String space = Http.JSON
                .readTree(b.get("/api/spaces").body())
                .path("spaces")
                .get(0)
                .path("id")
                .asText();
        HttpResponse<String> thread =
                b.send("POST", "/api/spaces/" + space + "/threads", "application/json", "{\"title\":\"t\"}", csrf);
        assertEquals(201, thread.statusCode(), thread.body());
        String threadId =
                Http.JSON.readTree(thread.body()).path("thread").path("id").asText();
        HttpResponse<String> run = b.send("POST", "/api/threads/" + threadId + "/runs", "application/json", "{}", csrf);
        assertEquals(201, run.statusCode(), run.body());
        String runId = Http.JSON.readTree(run.body()).path("run").path("id").asText();
        // no model provider is configured here: the run fails at once, and its stream ends after the terminal event
        HttpResponse<String> stream =
                b.send("GET", "/api/runs/" + runId + "/sse", null, null, Map.of("Accept", "text/event-stream"));
        assertEquals(200, stream.statusCode(), stream.body());
        assertTrue(stream.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        assertTrue(stream.body().startsWith("id: 1\nevent: run.queued\n"), stream.body());
        assertTrue(stream.body().contains("event: run.failed\n"), stream.body());

        String origin = server.base();
        assertEquals(
                200,
                b.send("GET", "/api/runs/" + runId + "/sse", null, null, Map.of("Origin", origin))
                        .statusCode(),
                "the server's own pages may");
        HttpResponse<String> foreign =
                b.send("GET", "/api/runs/" + runId + "/sse", null, null, Map.of("Origin", "https://evil.example"));
        assertEquals(403, foreign.statusCode(), foreign.body());
        assertTrue(foreign.body().contains("\"code\":\"FORBIDDEN\""), foreign.body());
        HttpResponse<String> ws =
                b.send("GET", "/api/runs/" + runId + "/ws", null, null, Map.of("Origin", "https://evil.example"));
        assertEquals(403, ws.statusCode(), ws.body());

        Browser stranger = new Browser(server.base());
        stranger.cookies.put("atrium_session", "not-a-session");
        assertEquals(
                401,
                stranger.send("GET", "/api/runs/" + runId + "/sse", null, null, Map.of())
                        .statusCode());
    }

    @Test
    void aSignInBodyThatIsNotAnObjectOfStringsIsAFailedSignInNotA500() {
        Browser b = new Browser(server.base());
        for (String body : List.of("", "null", "[]", "\"x\"", "123", "{\"username\":[1]}")) {
            HttpResponse<String> r = b.send("POST", "/auth/login/local", "application/json", body, Map.of());
            assertEquals(401, r.statusCode(), body + " -> " + r.body());
        }
        assertFalse(b.cookies.containsKey("atrium_session"));
    }

    @Test
    void aProviderNameWithNulIsABadRequestNotA500() {
        HttpResponse<String> r = new Browser(server.base()).get("/auth/login?provider=%00");
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("must not contain NUL"), r.body());
    }

    @Test
    void noSiteCanSignABrowserIntoAnotherAccount() {
        String name = user("forced");
        Http.Reply created = server.operator().post("/admin/identity/local-users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        String password = created.json().path("password").asText();
        Browser b = new Browser(server.base());
        HttpResponse<String> cross = b.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + name + "&password=" + java.net.URLEncoder.encode(password, StandardCharsets.UTF_8),
                Map.of("Origin", "https://evil.example"));
        assertEquals(403, cross.statusCode(), cross.body());
        assertFalse(b.cookies.containsKey("atrium_session"));
        HttpResponse<String> nulls = b.send(
                "POST", "/auth/login/local", "application/json", "{\"username\":null,\"password\":null}", Map.of());
        assertEquals(401, nulls.statusCode(), nulls.body());

        // an OIDC callback URL an attacker obtained for their own account does not sign in the victim's browser
        idp.enqueueCallback(new DefaultOAuth2TokenCallback("idp-a", "subject-forced-" + suffix, "JWT", null, Map.of()));
        Browser attacker = new Browser(server.base());
        HttpResponse<String> start = attacker.get("/auth/login?provider=mock&return_to=/welcome");
        HttpResponse<String> atIdp =
                attacker.get(start.headers().firstValue("Location").orElseThrow());
        String callback = atIdp.headers().firstValue("Location").orElseThrow();
        Browser victim = new Browser(server.base());
        HttpResponse<String> forced = victim.get(callback);
        assertEquals(400, forced.statusCode(), forced.body());
        assertFalse(victim.cookies.containsKey("atrium_session"));
        assertEquals(302, attacker.get(callback).statusCode(), "the browser that started it finishes it");
    }

    @Test
    void userAddPrintsAGeneratedPasswordThatSignsIn() throws Exception {
        String name = user("cli");
        Commands.Result r =
                Commands.atrium("user", "add", name, "--url", server.base(), "--data", server.data.toString());
        assertEquals(0, r.exit(), r.stderr());
        String password = r.lastLine();
        Browser b = new Browser(server.base());
        HttpResponse<String> ok = b.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + name + "&password=" + java.net.URLEncoder.encode(password, StandardCharsets.UTF_8),
                Map.of());
        assertEquals(302, ok.statusCode(), r.stdout());
        assertEquals(200, b.get("/api/me").statusCode());
        Commands.Result again =
                Commands.atrium("user", "add", name, "--url", server.base(), "--data", server.data.toString());
        assertEquals(1, again.exit());
        assertTrue(again.stderr().contains("exists"), again.stderr());
    }

    @Test
    void theConsentPageWorksWithTheBrowserSession() throws Exception {
        provider("mock", "idp-a");
        Browser b = new Browser(server.base());
        login(b, "mock", "idp-a", "subject-consent-" + suffix, null);
        HttpResponse<String> created = b.send(
                "POST",
                "/api/me/oauth/clients",
                "application/json",
                "{\"client_name\":\"Browser app\",\"redirect_uris\":[\"http://127.0.0.1:9/cb\"]}",
                Map.of("X-CSRF-Token", b.csrf()));
        assertEquals(201, created.statusCode(), created.body());
        String clientId = Http.JSON
                .readTree(created.body())
                .path("client")
                .path("client_id")
                .asText();
        String query = "response_type=code&client_id=" + clientId
                + "&redirect_uri=http://127.0.0.1:9/cb&scope=threads:read&state=s1";

        HttpResponse<String> anonymous = new Browser(server.base()).get("/oauth/authorize?" + query);
        assertEquals(302, anonymous.statusCode());
        assertTrue(anonymous.headers().firstValue("Location").orElseThrow().startsWith("/auth/login?return_to="));

        HttpResponse<String> page = b.get("/oauth/authorize?" + query);
        assertEquals(200, page.statusCode());
        assertTrue(page.body().contains("Browser app") && page.body().contains("threads:read"));
        assertEquals("DENY", page.headers().firstValue("X-Frame-Options").orElse(null));
        String decision = "{\"response_type\":\"code\",\"client_id\":\"" + clientId
                + "\",\"redirect_uri\":\"http://127.0.0.1:9/cb\",\"scope\":\"threads:read\",\"state\":\"s1\",\"approve\":true}";
        assertEquals(
                403,
                b.send("POST", "/api/oauth/authorize/decision", "application/json", decision, Map.of())
                        .statusCode(),
                "no CSRF token, no code");
        HttpResponse<String> approved = b.send(
                "POST",
                "/api/oauth/authorize/decision",
                "application/json",
                decision,
                Map.of("X-CSRF-Token", b.csrf()));
        assertEquals(200, approved.statusCode(), approved.body());
        JsonNode body = Http.JSON.readTree(approved.body());
        assertTrue(body.path("redirect_to").asText().startsWith("http://127.0.0.1:9/cb?code=atac_"), approved.body());
    }

    @Test
    void theCliGetsAPersonalAccessTokenOnItsLoopbackPort() throws Exception {
        provider("mock", "idp-a");
        Browser b = new Browser(server.base());
        login(b, "mock", "idp-a", "subject-cli-" + suffix, null);
        HttpResponse<String> page = b.get("/auth/cli?port=45678&state=cli-state-123");
        assertEquals(200, page.statusCode(), page.body());
        assertTrue(page.body().contains("name=\"csrf\""));
        HttpResponse<String> forged = b.send(
                "POST",
                "/auth/cli",
                "application/x-www-form-urlencoded",
                "port=45678&state=cli-state-123&csrf=wrong",
                Map.of());
        assertEquals(403, forged.statusCode());
        HttpResponse<String> approved = b.send(
                "POST",
                "/auth/cli",
                "application/x-www-form-urlencoded",
                "port=45678&state=cli-state-123&csrf=" + b.csrf(),
                Map.of());
        assertEquals(302, approved.statusCode());
        URI back = URI.create(approved.headers().firstValue("Location").orElseThrow());
        assertEquals("127.0.0.1", back.getHost());
        assertEquals(45678, back.getPort());
        Map<String, List<String>> q = URLUtils.parseParameters(back.getRawQuery());
        assertEquals("cli-state-123", q.get("state").get(0));
        String pat = q.get("token").get(0);
        assertTrue(pat.startsWith("atp_"));
        assertEquals(200, new Http(server.base(), pat).get("/api/me").status());
    }

    /**
     * A minimal OpenID provider that can lie: its token endpoint hands out an ID token whose payload was changed
     * after signing. Everything else is the real protocol: discovery, JWKS, authorization redirect, token endpoint.
     */
    private static final class EvilProvider implements AutoCloseable {
        private final HttpServer http;
        private final RSAKey key;
        private final AtomicReference<String> nonce = new AtomicReference<>();
        private volatile boolean tamper;
        volatile boolean wrongNonce;

        EvilProvider() throws Exception {
            key = new RSAKeyGenerator(2048).keyID("evil-1").generate();
            http = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0);
            http.createContext(
                    "/.well-known/openid-configuration",
                    ex -> json(
                            ex,
                            "{\"issuer\":\"" + issuer()
                                    + "\",\"authorization_endpoint\":\"" + issuer()
                                    + "/authorize\",\"token_endpoint\":\"" + issuer()
                                    + "/token\",\"jwks_uri\":\"" + issuer()
                                    + "/jwks\",\"response_types_supported\":[\"code\"],"
                                    + "\"subject_types_supported\":[\"public\"],\"id_token_signing_alg_values_supported\":[\"RS256\"]}"));
            http.createContext("/jwks", ex -> json(ex, new JWKSet(key.toPublicJWK()).toString()));
            http.createContext("/authorize", ex -> {
                Map<String, List<String>> q =
                        URLUtils.parseParameters(ex.getRequestURI().getRawQuery());
                nonce.set(q.get("nonce").get(0));
                ex.getResponseHeaders()
                        .add(
                                "Location",
                                q.get("redirect_uri").get(0) + "?code=evil-code&state="
                                        + q.get("state").get(0));
                ex.sendResponseHeaders(302, -1);
                ex.close();
            });
            http.createContext("/token", ex -> {
                ex.getRequestBody().readAllBytes();
                try {
                    SignedJWT jwt = new SignedJWT(
                            new JWSHeader.Builder(JWSAlgorithm.RS256)
                                    .keyID("evil-1")
                                    .type(JOSEObjectType.JWT)
                                    .build(),
                            new JWTClaimsSet.Builder()
                                    .issuer(issuer())
                                    .subject("evil-user-" + suffix)
                                    .audience("atrium-evil")
                                    .expirationTime(new Date(System.currentTimeMillis() + 60_000))
                                    .issueTime(new Date())
                                    .claim("nonce", wrongNonce ? "a-nonce-of-another-login" : nonce.get())
                                    .build());
                    jwt.sign(new RSASSASigner(key));
                    String token = jwt.serialize();
                    if (tamper) {
                        String[] parts = token.split("\\.");
                        String claims = new String(
                                        java.util.Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8)
                                .replace("evil-user-", "admin-user-");
                        token = parts[0] + "."
                                + java.util.Base64.getUrlEncoder()
                                        .withoutPadding()
                                        .encodeToString(claims.getBytes(StandardCharsets.UTF_8))
                                + "." + parts[2];
                    }
                    json(ex, "{\"access_token\":\"x\",\"token_type\":\"Bearer\",\"id_token\":\"" + token + "\"}");
                } catch (Exception e) {
                    throw new IOException(e);
                }
            });
            http.start();
        }

        String issuer() {
            return "http://127.0.0.1:" + http.getAddress().getPort();
        }

        HttpResponse<String> login(Browser b, boolean tamperToken) {
            tamper = tamperToken;
            HttpResponse<String> start = b.get("/auth/login?provider=evil");
            HttpResponse<String> atIdp =
                    b.get(start.headers().firstValue("Location").orElseThrow());
            return b.get(atIdp.headers().firstValue("Location").orElseThrow());
        }

        private static void json(HttpExchange ex, String body) throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }

        @Override
        public void close() {
            http.stop(0);
        }
    }
}
