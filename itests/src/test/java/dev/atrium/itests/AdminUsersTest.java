package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The operator's users and audit log ({@code /admin/users…}, {@code /admin/audit}): list and search with keyset
 * pages, suspend and reactivate (refused and accepted again from the very next request), revoke-tokens (personal
 * access tokens, browser sessions and OAuth tokens all refused at once), the audit entries all this and a feature
 * switch leave, and the refusal of anyone but the operator.
 */
@SharedServer
class AdminUsersTest {

    private static String marker() {
        return Long.toString(
                ThreadLocalRandom.current().nextLong(36L * 36 * 36 * 36 * 36, 36L * 36 * 36 * 36 * 36 * 36), 36);
    }

    @Test
    void theListSearchesByNameAndStatusNewestFirstInKeysetPages(AtriumServer server) {
        Http operator = server.operator();
        String marker = marker();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String name = "lst-" + marker + "-" + i;
            assertEquals(
                    201, operator.post("/admin/users", Map.of("username", name)).status());
            names.add(name);
        }
        assertEquals(
                201,
                operator.post("/admin/users/" + names.get(1) + "/tokens", Map.of())
                        .status());

        Http.Reply first = operator.get("/admin/users?q=" + marker.toUpperCase() + "&limit=2");
        assertEquals(200, first.status(), first.body());
        JsonNode users = first.get("users");
        assertEquals(2, users.size(), first.body());
        assertEquals(names.get(2), users.get(0).path("username").asText());
        assertEquals(names.get(1), users.get(1).path("username").asText());
        JsonNode one = users.get(1);
        assertEquals("local", one.path("provider").asText());
        assertEquals("active", one.path("status").asText());
        assertEquals(1, one.path("token_count").asInt());
        assertTrue(one.path("last_sign_in_at").isNull());
        assertFalse(one.path("created_at").asText().isEmpty());
        String cursor = first.get("next_cursor").asText();

        Http.Reply second = operator.get("/admin/users?q=" + marker + "&limit=2&cursor=" + cursor);
        assertEquals(200, second.status(), second.body());
        assertEquals(1, second.get("users").size(), second.body());
        assertEquals(names.get(0), second.get("users").get(0).path("username").asText());
        assertTrue(second.get("next_cursor").isNull());

        // a user made between the pages neither repeats nor shifts the next page
        assertEquals(
                201,
                operator.post("/admin/users", Map.of("username", "lst-" + marker + "-3"))
                        .status());
        Http.Reply again = operator.get("/admin/users?q=" + marker + "&limit=2&cursor=" + cursor);
        assertEquals(names.get(0), again.get("users").get(0).path("username").asText());

        assertEquals(
                200,
                operator.post("/admin/users/" + names.get(0) + "/suspend", Map.of())
                        .status());
        Http.Reply suspended = operator.get("/admin/users?q=" + marker + "&status=suspended");
        assertEquals(1, suspended.get("users").size(), suspended.body());
        assertEquals(
                names.get(0), suspended.get("users").get(0).path("username").asText());
        assertEquals(
                3,
                operator.get("/admin/users?q=" + marker + "&status=active")
                        .get("users")
                        .size());
        // % and _ are searched for as they are, not as patterns
        assertEquals(
                0, operator.get("/admin/users?q=" + marker + "%25").get("users").size());

        Http.Reply single = operator.get("/admin/users/" + names.get(1));
        assertEquals(200, single.status(), single.body());
        assertEquals(names.get(1), single.get("user").path("username").asText());
        assertEquals(names.get(1), single.get("space").path("slug").asText());
    }

    @Test
    void badQueriesAreFourHundredsAndAnUnknownUserIsNotFound(AtriumServer server) {
        Http operator = server.operator();
        String garbage = Base64.getUrlEncoder().encodeToString("not a cursor".getBytes(StandardCharsets.UTF_8));
        for (String query :
                List.of("status=frozen", "limit=0", "limit=101", "limit=x", "cursor=" + garbage, "cursor=%25%25")) {
            Http.Reply r = operator.get("/admin/users?" + query);
            assertEquals(400, r.status(), query + ": " + r.body());
            assertEquals("BAD_REQUEST", r.errorCode());
            assertEquals(
                    400,
                    operator.get("/admin/audit?" + query.replace("status=frozen", "limit=-1"))
                            .status(),
                    query);
        }
        for (String path : List.of("", "/suspend", "/reactivate", "/revoke-tokens")) {
            Http.Reply r = path.isEmpty()
                    ? operator.get("/admin/users/no-such-user")
                    : operator.post("/admin/users/no-such-user" + path, Map.of());
            assertEquals(404, r.status(), path + ": " + r.body());
            assertEquals("NOT_FOUND", r.errorCode());
        }
    }

    @Test
    void aSuspendedUsersTokenIsRefusedAtOnceAndAcceptedAgainOnReactivation(AtriumServer server) {
        User u = server.newUser();
        // proven once, so the kernel keeps the proof: the suspension must not wait for it to lapse
        assertEquals(200, u.http().get("/api/spaces/me").status());
        assertEquals(200, u.http().get("/api/spaces/me").status());

        Http.Reply suspended = server.operator().post("/admin/users/" + u.username() + "/suspend", Map.of());
        assertEquals(200, suspended.status(), suspended.body());
        assertEquals("suspended", suspended.get("user").path("status").asText());
        Http.Reply refused = u.http().get("/api/spaces/me");
        assertEquals(401, refused.status(), refused.body());
        assertEquals("UNAUTHORIZED", refused.errorCode());
        assertEquals(
                "suspended",
                server.operator()
                        .get("/admin/users/" + u.username())
                        .get("user")
                        .path("status")
                        .asText());

        Http.Reply back = server.operator().post("/admin/users/" + u.username() + "/reactivate", Map.of());
        assertEquals(200, back.status(), back.body());
        assertEquals("active", back.get("user").path("status").asText());
        assertEquals(200, u.http().get("/api/spaces/me").status());
    }

    @Test
    void revokeTokensEndsPersonalAccessTokensSessionsAndOAuthTokensAtOnce(AtriumServer server) throws Exception {
        Http operator = server.operator();
        String name = "rvk-" + marker();
        Http.Reply created = operator.post("/admin/identity/local-users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        Browser browser = new Browser(server.base());
        browser.get("/auth/login?provider=local");
        HttpResponse<String> login = browser.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + name + "&password="
                        + created.json().path("password").asText(),
                Map.of());
        assertEquals(302, login.statusCode(), login.body());
        assertEquals(200, browser.get("/api/spaces/me").statusCode());

        Http.Reply pat = operator.post("/admin/users/" + name + "/tokens", Map.of("name", "laptop"));
        assertEquals(201, pat.status(), pat.body());
        Http user = new Http(server.base(), pat.json().path("token").asText());
        assertEquals(200, user.get("/api/spaces/me").status());

        Http.Reply client = user.post(
                "/api/me/oauth/clients",
                Map.of(
                        "client_name",
                        "Revoked soon",
                        "redirect_uris",
                        List.of("http://127.0.0.1:9/cb"),
                        "scope",
                        "threads:read"));
        assertEquals(201, client.status(), client.body());
        String oauthToken = clientCredentialsToken(
                server,
                client.json().path("client").path("client_id").asText(),
                client.json().path("client").path("client_secret").asText());
        Http oauth = new Http(server.base(), oauthToken);
        assertEquals(200, oauth.get("/api/spaces/me").status());

        JsonNode listed = operator.get("/admin/users?q=" + name).get("users").get(0);
        assertEquals(1, listed.path("token_count").asInt());
        assertFalse(listed.path("last_sign_in_at").isNull(), "the sign-in is known: " + listed);

        Http.Reply revoked = operator.post("/admin/users/" + name + "/revoke-tokens", Map.of());
        assertEquals(200, revoked.status(), revoked.body());
        assertEquals(1, revoked.get("revoked").path("personal_access_tokens").asInt(), revoked.body());
        assertEquals(1, revoked.get("revoked").path("sessions").asInt(), revoked.body());
        assertEquals(1, revoked.get("revoked").path("oauth_tokens").asInt(), revoked.body());
        assertEquals("active", revoked.get("user").path("status").asText());
        assertEquals(0, revoked.get("user").path("token_count").asInt());

        assertEquals(401, user.get("/api/spaces/me").status());
        assertEquals(401, oauth.get("/api/spaces/me").status());
        assertEquals(401, browser.get("/api/spaces/me").statusCode());
        // the user is not suspended: a new token works
        Http.Reply fresh = operator.post("/admin/users/" + name + "/tokens", Map.of());
        assertEquals(
                200,
                new Http(server.base(), fresh.json().path("token").asText())
                        .get("/api/spaces/me")
                        .status());

        // the audit log has the sign-in, the token and the revocation, and none of the secrets
        Http.Reply audit = operator.get("/admin/audit?limit=100");
        assertEquals(200, audit.status(), audit.body());
        assertTrue(hasEntry(audit.get("entries"), name, "sign_in", name), audit.body());
        assertTrue(hasEntry(audit.get("entries"), "operator", "token_created", name), audit.body());
        assertTrue(hasEntry(audit.get("entries"), "operator", "tokens_revoked", name), audit.body());
        assertTrue(hasEntry(audit.get("entries"), "operator", "user_created", name), audit.body());
        for (String secret : List.of(
                pat.json().path("token").asText(),
                oauthToken,
                created.json().path("password").asText(),
                browser.cookies.get("atrium_session") == null ? "ats_none" : browser.cookies.get("atrium_session"))) {
            assertFalse(audit.body().contains(secret), "no secret in the audit log");
        }
    }

    @Test
    void theAuditLogFiltersByActorAndActionInKeysetPages(AtriumServer server) {
        Http operator = server.operator();
        User a = server.newUser();
        User b = server.newUser();
        for (User u : List.of(a, b)) {
            assertEquals(
                    200,
                    operator.post("/admin/users/" + u.username() + "/suspend", Map.of())
                            .status());
            assertEquals(
                    200,
                    operator.post("/admin/users/" + u.username() + "/reactivate", Map.of())
                            .status());
        }
        Http.Reply first = operator.get("/admin/audit?actor=operator&action=user_suspended&limit=1");
        assertEquals(200, first.status(), first.body());
        assertEquals(1, first.get("entries").size());
        JsonNode newest = first.get("entries").get(0);
        assertEquals(b.username(), newest.path("target").asText());
        assertEquals(b.principalId(), newest.path("principal_id").asText());
        assertEquals("user_suspended", newest.path("action").asText());
        Http.Reply second = operator.get("/admin/audit?actor=operator&action=user_suspended&limit=1&cursor="
                + first.get("next_cursor").asText());
        assertEquals(a.username(), second.get("entries").get(0).path("target").asText(), second.body());
        Http.Reply reactivated = operator.get("/admin/audit?action=user_reactivated&limit=2");
        assertEquals(
                b.username(), reactivated.get("entries").get(0).path("target").asText());
        assertEquals(
                a.username(), reactivated.get("entries").get(1).path("target").asText());
        assertEquals(
                0,
                operator.get("/admin/audit?actor=nobody-at-all").get("entries").size());
    }

    @Test
    void switchingAFeatureIsAudited(AtriumServer server) {
        Http operator = server.operator();
        try {
            assertEquals(
                    200,
                    operator.post("/admin/features/shortcuts/disable", Map.of()).status());
        } finally {
            assertEquals(
                    200,
                    operator.post("/admin/features/shortcuts/enable", Map.of()).status());
        }
        JsonNode entries = operator.get("/admin/audit?actor=operator&limit=2").get("entries");
        assertEquals("feature_enabled", entries.get(0).path("action").asText(), entries.toString());
        assertEquals("shortcuts", entries.get(0).path("target").asText());
        assertEquals("feature_disabled", entries.get(1).path("action").asText(), entries.toString());
        assertEquals("shortcuts", entries.get(1).path("target").asText());
    }

    @Test
    void onlyTheOperatorReachesTheUsersAndTheAuditLog(AtriumServer server) {
        User u = server.newUser();
        User target = server.newUser();
        for (Http http : List.of(u.http(), server.anonymous())) {
            for (String path : List.of("/admin/users", "/admin/users/" + target.username(), "/admin/audit")) {
                Http.Reply r = http.get(path);
                assertEquals(401, r.status(), path + ": " + r.body());
                assertEquals("UNAUTHORIZED", r.errorCode());
            }
            for (String action : List.of("suspend", "reactivate", "revoke-tokens")) {
                Http.Reply r = http.post("/admin/users/" + target.username() + "/" + action, Map.of());
                assertEquals(401, r.status(), action + ": " + r.body());
            }
        }
        assertEquals(200, target.http().get("/api/spaces/me").status(), "nothing was done to the target");
        assertNotNull(server.operator().get("/admin/users/" + target.username()).get("user"));
    }

    private static boolean hasEntry(JsonNode entries, String actor, String action, String target) {
        for (JsonNode e : entries) {
            if (actor.equals(e.path("actor").asText())
                    && action.equals(e.path("action").asText())
                    && target.equals(e.path("target").asText())) {
                return true;
            }
        }
        return false;
    }

    /** An OAuth access token of the client's owner, by the client_credentials grant. */
    private static String clientCredentialsToken(AtriumServer server, String clientId, String secret) throws Exception {
        String basic = Base64.getEncoder().encodeToString((clientId + ":" + secret).getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(server.base() + "/oauth/token"))
                                .header("Authorization", "Basic " + basic)
                                .header("Content-Type", "application/x-www-form-urlencoded")
                                .POST(HttpRequest.BodyPublishers.ofString(
                                        "grant_type=client_credentials&scope=threads%3Aread"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return Http.JSON.readTree(r.body()).path("access_token").asText();
    }
}
