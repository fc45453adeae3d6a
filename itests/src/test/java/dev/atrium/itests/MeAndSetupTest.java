package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@SharedServer
class MeAndSetupTest {

    @Test
    void meAndAuthMeCarryExactlyTheSpecFields(AtriumServer server) {
        User u = server.newUser();
        JsonNode me = u.http().get("/api/me").json();
        assertEquals(Set.of("email", "name", "username", "picture", "setup_completed"), WorkspacesTest.fields(me));
        assertEquals(u.username(), me.get("username").asText());
        assertEquals(me, u.http().get("/api/auth/me").json());
    }

    @Test
    void settingsAreValidatedAndPersisted(AtriumServer server) {
        User u = server.newUser();
        JsonNode s = u.http().get("/api/me/settings").json();
        assertEquals(
                Set.of("setup_completed", "auto_update_enabled", "private_account", "activity_visibility"),
                WorkspacesTest.fields(s));
        JsonNode changed = u.http()
                .patch("/api/me/settings", Map.of("private_account", true, "activity_visibility", "followers"))
                .json();
        assertTrue(changed.get("private_account").asBoolean());
        assertEquals("followers", changed.get("activity_visibility").asText());
        assertEquals(
                400,
                u.http()
                        .patch("/api/me/settings", Map.of("activity_visibility", "everyone"))
                        .status());
        assertEquals(
                400,
                u.http()
                        .patch("/api/me/settings", Map.of("private_account", "yes"))
                        .status());
        assertEquals(changed, u.http().get("/api/me/settings").json());
    }

    @Test
    void usernameChangesAreValidatedAndUnique(AtriumServer server) {
        User a = server.newUser();
        User b = server.newUser();
        String fresh = "renamed-" + a.username();
        Http.Reply ok = a.http().patch("/api/me/username", Map.of("username", fresh));
        assertEquals(200, ok.status(), ok.body());
        assertEquals(fresh, ok.get("username").asText());
        Http.Reply taken = b.http().patch("/api/me/username", Map.of("username", fresh));
        assertEquals(409, taken.status());
        assertEquals("CONFLICT", taken.errorCode());
        for (String bad :
                new String[] {"ab", "Upper", "-dash", "dash-", "two--dashes", "x".repeat(40), "admin", "sp_ace"}) {
            Http.Reply r = b.http().patch("/api/me/username", Map.of("username", bad));
            assertEquals(400, r.status(), bad + ": " + r.body());
        }
        assertEquals(
                400, b.http().patch("/api/me/username", Map.of("username", 7)).status());
        assertEquals(b.username(), b.http().get("/api/me").get("username").asText());
    }

    @Test
    void setupReportsChecksAndCompletes(AtriumServer server) {
        User a = server.newUser();
        User b = server.newUser();
        assertEquals(
                Set.of("setup_completed", "username"),
                WorkspacesTest.fields(a.http().get("/api/setup/status").json()));
        JsonNode taken = a.http()
                .post("/api/setup/check-username", Map.of("username", b.username()))
                .json();
        assertFalse(taken.get("available").asBoolean());
        JsonNode malformed = a.http()
                .post("/api/setup/check-username", Map.of("username", "No!"))
                .json();
        assertFalse(malformed.get("available").asBoolean());
        assertTrue(malformed.get("reason").asText().contains("lowercase"));
        String wanted = "setup-" + a.username();
        assertTrue(a.http()
                .post("/api/setup/check-username", Map.of("username", wanted))
                .get("available")
                .asBoolean());
        assertEquals(400, a.http().post("/api/setup/complete", Map.of()).status());
        JsonNode done =
                a.http().post("/api/setup/complete", Map.of("username", wanted)).json();
        assertTrue(done.get("setup_completed").asBoolean());
        assertEquals(wanted, a.http().get("/api/me").get("username").asText());
        assertTrue(a.http().get("/api/setup/status").get("setup_completed").asBoolean());
    }
}
