package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@SharedServer
class TokensTest {

    @Test
    void createAnswers201AndShowsTheTokenOnlyOnce(AtriumServer server) {
        User u = server.newUser();
        Http.Reply r = u.http()
                .post("/api/me/personal-access-tokens", Map.of("name", "laptop", "scopes", "threads:read repos:read"));
        assertEquals(201, r.status(), r.body());
        String token = r.get("token").asText();
        assertTrue(token.startsWith("atp_"));
        assertTrue(token.startsWith(r.get("token_prefix").asText()));
        assertEquals("threads:read repos:read", r.get("scopes").asText());
        assertEquals(
                Set.of("id", "name", "scopes", "token", "token_prefix", "expires_at", "created_at"),
                WorkspacesTest.fields(r.json()));
        JsonNode listed = u.http().get("/api/me/personal-access-tokens").get("tokens");
        assertEquals(2, listed.size());
        assertFalse(listed.toString().contains(token));
        for (JsonNode t : listed) {
            assertFalse(t.has("token"));
        }
        assertEquals(200, u.http().as(token).get("/api/me").status());
    }

    @Test
    void aDeletedTokenIsRefusedAtOnce(AtriumServer server) {
        User u = server.newUser();
        JsonNode created = u.http()
                .post("/api/me/personal-access-tokens", Map.of("name", "short-lived"))
                .json();
        Http other = u.http().as(created.get("token").asText());
        assertEquals(200, other.get("/api/me").status());
        assertEquals(
                200,
                u.http()
                        .delete("/api/me/personal-access-tokens/"
                                + created.get("id").asText())
                        .status());
        Http.Reply after = other.get("/api/me");
        assertEquals(401, after.status());
        assertEquals("UNAUTHORIZED", after.errorCode());
        assertEquals(
                404,
                u.http()
                        .delete("/api/me/personal-access-tokens/"
                                + created.get("id").asText())
                        .status());
    }

    @Test
    void anExpiredTokenIsRefused(AtriumServer server) throws InterruptedException {
        User u = server.newUser();
        Instant expiry = Instant.now().plusSeconds(2);
        JsonNode created = u.http()
                .post("/api/me/personal-access-tokens", Map.of("name", "brief", "expiresAt", expiry.toString()))
                .json();
        assertEquals(
                expiry.toString().substring(0, 19),
                created.get("expires_at").asText().substring(0, 19));
        Http brief = u.http().as(created.get("token").asText());
        assertEquals(200, brief.get("/api/me").status());
        Thread.sleep(Math.max(0, expiry.toEpochMilli() - System.currentTimeMillis()) + 300);
        assertEquals(401, brief.get("/api/me").status());
    }

    @Test
    void invalidTokenRequestsAreRefused(AtriumServer server) {
        User u = server.newUser();
        String path = "/api/me/personal-access-tokens";
        assertEquals(
                400,
                u.http()
                        .post(path, Map.of("name", "x", "expiresAt", "2000-01-01T00:00:00Z"))
                        .status());
        assertEquals(
                400,
                u.http()
                        .post(path, Map.of("name", "x", "expiresAt", "tomorrow"))
                        .status());
        assertEquals(
                400,
                u.http().post(path, Map.of("name", "x", "scopes", "everything")).status());
        assertEquals(400, u.http().post(path, Map.of("scopes", "*")).status());
        assertEquals(1, u.http().get(path).get("tokens").size());
    }

    @Test
    void scopesLimitWhatATokenMayDo(AtriumServer server) {
        User u = server.newUser("repos:read");
        String space = "/api/spaces/" + u.defaultSpaceId();
        assertEquals(200, u.http().get(space).status());
        Http.Reply denied = u.http().get(space + "/memories");
        assertEquals(403, denied.status());
        assertEquals("FORBIDDEN", denied.errorCode());
        assertTrue(denied.json().path("error").path("message").asText().contains("threads:read"));
        User reader = server.newUser("threads:read");
        assertEquals(
                200,
                reader.http()
                        .get("/api/spaces/" + reader.defaultSpaceId() + "/memories")
                        .status());
        assertEquals(
                403,
                reader.http()
                        .post("/api/spaces/" + reader.defaultSpaceId() + "/memories", Map.of("content", "x"))
                        .status());
    }

    @Test
    void aLimitedTokenCannotMintItselfMoreOrChangeTheAccount(AtriumServer server) {
        User reader = server.newUser("threads:read");
        assertEquals(200, reader.http().get("/api/me").status(), "reading who one is is fine");
        assertEquals(
                403,
                reader.http().get("/api/me/personal-access-tokens").status(),
                "listing the account's tokens needs account:read");
        Http.Reply mint =
                reader.http().post("/api/me/personal-access-tokens", Map.of("name", "escalate", "scopes", "*"));
        assertEquals(403, mint.status(), mint.body());
        assertEquals("FORBIDDEN", mint.errorCode());
        assertEquals(
                403, reader.http().post("/api/spaces", Map.of("name", "more")).status());
        assertEquals(
                403,
                reader.http()
                        .patch("/api/me/username", Map.of("username", "renamed" + System.nanoTime() % 1000))
                        .status());
        Http.Reply listing = server.operator()
                .post("/admin/users/" + reader.username() + "/tokens", Map.of("scopes", "account:read"));
        assertEquals(201, listing.status(), listing.body());
        assertEquals(
                2,
                reader.http()
                        .as(listing.json().path("token").asText())
                        .get("/api/me/personal-access-tokens")
                        .get("tokens")
                        .size(),
                "nothing was created but the operator's second token");
    }

    @Test
    void theAccountsNotificationsShortcutsAndSettingsNeedAccountReadAndAnExportNeedsEverything(AtriumServer server) {
        User runs = server.newUser("runs:read");
        String space = "/api/spaces/" + runs.defaultSpaceId();
        List<String> accountReads = List.of(
                "/api/notifications",
                "/api/notifications/unread-count",
                "/api/notifications/preferences",
                "/api/notifications/settings",
                "/api/shortcuts",
                space + "/shortcuts/groups",
                space + "/members",
                space + "/model",
                space + "/sidebar-items",
                space + "/common-env",
                "/api/me/settings",
                "/api/me/personal-access-tokens",
                "/api/auth/links");
        for (String path : accountReads) {
            Http.Reply refused = runs.http().get(path);
            assertEquals(403, refused.status(), path + ": " + refused.body());
            assertEquals(
                    "this token lacks the scope account:read",
                    refused.json().path("error").path("message").asText(),
                    path);
        }
        Http.Reply token =
                server.operator().post("/admin/users/" + runs.username() + "/tokens", Map.of("scopes", "account:read"));
        assertEquals(201, token.status(), token.body());
        Http account = runs.http().as(token.json().path("token").asText());
        for (String path : accountReads) {
            assertEquals(200, account.get(path).status(), path);
        }
        assertEquals(
                403, account.get(space + "/export").status(), "an export is everything: one scope does not cover it");
        Http.Reply everything =
                server.operator().post("/admin/users/" + runs.username() + "/tokens", Map.of("scopes", "*"));
        assertEquals(201, everything.status(), everything.body());
        assertEquals(
                200,
                runs.http()
                        .as(everything.json().path("token").asText())
                        .get(space + "/export")
                        .status());
        // who one is and which workspaces one has stays readable with any scope
        for (String path : List.of("/api/me", "/api/spaces", space)) {
            assertEquals(200, runs.http().get(path).status(), path);
        }
    }

    @Test
    void requestsWithoutValidCredentialsAre401WithAChallenge(AtriumServer server) {
        Http.Reply none = server.anonymous().get("/api/me");
        assertEquals(401, none.status());
        assertEquals("UNAUTHORIZED", none.errorCode());
        assertTrue(
                none.raw().headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"));
        assertEquals(
                401,
                server.anonymous()
                        .as("atp_forged0000000000000000000000000000000000")
                        .get("/api/me")
                        .status());
        assertEquals(
                401, server.anonymous().as("not-a-token").get("/api/spaces").status());
        assertEquals(401, server.operator().get("/api/me").status(), "the operator token is not a Principal");
        assertEquals(
                401,
                server.newUser()
                        .http()
                        .post("/admin/users", Map.of("username", "sneaky"))
                        .status());
    }
}
