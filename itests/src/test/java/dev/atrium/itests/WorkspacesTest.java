package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@SharedServer
class WorkspacesTest {

    static final Set<String> SPACE_FIELDS =
            Set.of("id", "name", "slug", "description", "is_default", "security_posture", "created_at", "updated_at");

    static Set<String> fields(JsonNode node) {
        Set<String> out = new HashSet<>();
        node.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void createAnswers201WithExactlyTheSpecFieldsAndNoRepository(AtriumServer server) {
        User alice = server.newUser();
        Http.Reply r = alice.http().post("/api/spaces", Map.of("name", "  Research Notes  "));
        assertEquals(201, r.status(), r.body());
        assertEquals(Set.of("space"), fields(r.json()));
        JsonNode space = r.get("space");
        assertEquals(SPACE_FIELDS, fields(space));
        assertEquals("Research Notes", space.get("name").asText());
        assertEquals("research-notes", space.get("slug").asText());
        assertFalse(space.get("is_default").asBoolean());
        assertEquals("standard", space.get("security_posture").asText());

        JsonNode byId =
                alice.http().get("/api/spaces/" + space.get("id").asText()).get("space");
        JsonNode bySlug = alice.http().get("/api/spaces/research-notes").get("space");
        assertEquals(space, byId);
        assertEquals(space, bySlug);
        assertEquals(SPACE_FIELDS, fields(byId));
    }

    @Test
    void listHoldsTheDefaultWorkspaceFirstAndPaginates(AtriumServer server) {
        User u = server.newUser();
        for (int i = 0; i < 3; i++) {
            assertEquals(
                    201, u.http().post("/api/spaces", Map.of("name", "ws " + i)).status());
        }
        Http.Reply all = u.http().get("/api/spaces");
        assertEquals(200, all.status());
        assertEquals(4, all.get("total").asInt());
        assertTrue(all.get("spaces").get(0).get("is_default").asBoolean());
        Http.Reply page = u.http().get("/api/spaces?limit=2&offset=2");
        assertEquals(2, page.get("spaces").size());
        assertEquals("ws 2", page.get("spaces").get(1).get("name").asText());
        assertEquals(400, u.http().get("/api/spaces?limit=101").status());
        assertEquals(400, u.http().get("/api/spaces?limit=abc").status());
    }

    @Test
    void defaultWorkspaceIsReachableThroughBothCompatibilityRoutes(AtriumServer server) {
        User u = server.newUser();
        JsonNode me = u.http().get("/api/spaces/me").get("space");
        JsonNode personal = u.http().get("/api/me/personal-space").get("space");
        assertEquals(me, personal);
        assertTrue(me.get("is_default").asBoolean());
        assertEquals(u.defaultSpaceId(), me.get("id").asText());
        assertEquals(u.username(), me.get("slug").asText());
    }

    @Test
    void deletingTheDefaultWorkspaceIsRefused(AtriumServer server) {
        User u = server.newUser();
        Http.Reply r = u.http().delete("/api/spaces/" + u.defaultSpaceId());
        assertEquals(409, r.status());
        assertEquals("CONFLICT", r.errorCode());
        assertEquals(200, u.http().get("/api/spaces/" + u.defaultSpaceId()).status());
    }

    @Test
    void deletingAnotherWorkspaceRemovesIt(AtriumServer server) {
        User u = server.newUser();
        String id = u.http()
                .post("/api/spaces", Map.of("name", "temp"))
                .get("space")
                .get("id")
                .asText();
        Http.Reply r = u.http().delete("/api/spaces/" + id);
        assertEquals(200, r.status());
        assertTrue(r.get("success").asBoolean());
        assertEquals(404, u.http().get("/api/spaces/" + id).status());
        assertEquals(404, u.http().delete("/api/spaces/" + id).status());
    }

    @Test
    void nameMustBeOneToOneHundredCharacters(AtriumServer server) {
        User u = server.newUser();
        assertEquals(
                201,
                u.http().post("/api/spaces", Map.of("name", "n".repeat(100))).status());
        Http.Reply tooLong = u.http().post("/api/spaces", Map.of("name", "n".repeat(101)));
        assertEquals(400, tooLong.status());
        assertEquals("BAD_REQUEST", tooLong.errorCode());
        assertTrue(tooLong.json().path("error").path("message").asText().contains("name"));
        assertEquals(400, u.http().post("/api/spaces", Map.of("name", "   ")).status());
        assertEquals(400, u.http().post("/api/spaces", Map.of()).status());
        String id = u.defaultSpaceId();
        assertEquals(
                400, u.http().patch("/api/spaces/" + id, Map.of("name", "")).status());
    }

    @Test
    void slugsAreUniqueAcrossWorkspacesAndUsernames(AtriumServer server) {
        User a = server.newUser();
        User b = server.newUser();
        Http.Reply clash = a.http().post("/api/spaces", Map.of("name", "x", "slug", b.username()));
        assertEquals(409, clash.status(), clash.body());
        assertEquals("CONFLICT", clash.errorCode());
        String slug = "shared-" + a.username();
        assertEquals(
                201,
                a.http().post("/api/spaces", Map.of("name", "x", "slug", slug)).status());
        assertEquals(
                409,
                b.http().post("/api/spaces", Map.of("name", "y", "slug", slug)).status());
        assertEquals(
                409,
                b.http().patch("/api/me/username", Map.of("username", slug)).status());
        assertEquals(
                409,
                b.http()
                        .patch("/api/spaces/" + b.defaultSpaceId(), Map.of("slug", slug))
                        .status());
        Http.Reply derived = b.http().post("/api/spaces", Map.of("name", slug));
        assertEquals(201, derived.status());
        assertEquals(slug + "-2", derived.get("space").get("slug").asText());
        assertEquals(
                400,
                a.http()
                        .post("/api/spaces", Map.of("name", "x", "slug", "Not A Slug"))
                        .status());
    }

    @Test
    void securityPostureIsStandardOrRestrictedEgress(AtriumServer server) {
        User u = server.newUser();
        Http.Reply created =
                u.http().post("/api/spaces", Map.of("name", "locked", "security_posture", "restricted_egress"));
        assertEquals(201, created.status());
        String id = created.get("space").get("id").asText();
        assertEquals(
                "restricted_egress",
                created.get("space").get("security_posture").asText());
        Http.Reply bad = u.http().patch("/api/spaces/" + id, Map.of("security_posture", "open"));
        assertEquals(400, bad.status());
        assertEquals("BAD_REQUEST", bad.errorCode());
        assertEquals(
                400,
                u.http()
                        .post("/api/spaces", Map.of("name", "x", "security_posture", "none"))
                        .status());
        assertEquals(
                "restricted_egress",
                u.http()
                        .get("/api/spaces/" + id)
                        .get("space")
                        .get("security_posture")
                        .asText());
        assertEquals(
                "standard",
                u.http()
                        .patch("/api/spaces/" + id, Map.of("security_posture", "standard"))
                        .get("space")
                        .get("security_posture")
                        .asText());
    }

    @Test
    void modelSettingsAreReadAndWrittenAndAcceptedAsWorkspaceAliases(AtriumServer server) {
        User u = server.newUser();
        String path = "/api/spaces/" + u.defaultSpaceId();
        JsonNode empty = u.http().get(path + "/model").json();
        assertTrue(empty.get("model").isNull());
        JsonNode set = u.http()
                .patch(path + "/model", Map.of("model", "gpt-x", "provider", "openai"))
                .json();
        assertEquals("gpt-x", set.get("model").asText());
        assertEquals("openai", set.get("provider").asText());
        Http.Reply alias = u.http().patch(path, Map.of("ai_model", "claude-y", "ai_provider", "anthropic"));
        assertEquals(200, alias.status());
        assertEquals(SPACE_FIELDS, fields(alias.get("space")));
        JsonNode after = u.http().get(path + "/model").json();
        assertEquals("claude-y", after.get("model").asText());
        assertEquals("anthropic", after.get("provider").asText());
        assertEquals(400, u.http().patch(path + "/model", Map.of("model", 3)).status());
    }

    @Test
    void sidebarListsEnabledCapabilitiesAndExportDescribesTheWorkspace(AtriumServer server) {
        User u = server.newUser();
        String path = "/api/spaces/" + u.defaultSpaceId();
        JsonNode items = u.http().get(path + "/sidebar-items").get("items");
        assertTrue(items.findValuesAsText("id").contains("memories"), items.toString());
        // each capability bundle's atrium.capability: its name, its label, its path under the workspace
        // (another test may disable memories meanwhile: the others are looked at)
        Map<String, String> labels = new java.util.TreeMap<>();
        for (JsonNode item : items) {
            labels.put(
                    item.get("id").asText(),
                    item.get("label").asText() + " " + item.get("path").asText());
        }
        assertEquals("Repositories " + path + "/repos", labels.get("repos"), items.toString());
        assertEquals("Runs " + path + "/runs", labels.get("runs"), items.toString());
        assertEquals("Threads " + path + "/threads", labels.get("threads"), items.toString());
        assertFalse(labels.containsKey("oauth"), "the OAuth server declares sidebar=false: " + items);
        assertEquals(
                200,
                u.http()
                        .put(path + "/common-env", Map.of("name", "API_KEY", "value", "s3cret", "secret", true))
                        .status());
        JsonNode export = u.http().get(path + "/export").json();
        assertEquals(u.defaultSpaceId(), export.get("space").get("id").asText());
        assertEquals("API_KEY", export.get("common_env").get(0).get("name").asText());
        assertFalse(export.toString().contains("s3cret"));
    }

    @Test
    void membersListTheOneOwnerAndCannotBeChanged(AtriumServer server) {
        User u = server.newUser();
        String path = "/api/spaces/" + u.defaultSpaceId() + "/members";
        JsonNode members = u.http().get(path).get("members");
        assertEquals(1, members.size());
        assertEquals("owner", members.get(0).get("role").asText());
        assertEquals(u.username(), members.get(0).get("username").asText());
        for (Http.Reply r : List.of(
                u.http().post(path, Map.of("email", "x@example.org", "role", "editor")),
                u.http().patch(path + "/someone", Map.of("role", "viewer")),
                u.http().delete(path + "/someone"))) {
            assertEquals(403, r.status());
            assertEquals("FORBIDDEN", r.errorCode());
        }
    }

    @Test
    void commonEnvironmentUpsertsListsMasksSecretsAndDeletes(AtriumServer server) {
        User u = server.newUser();
        String path = "/api/spaces/" + u.defaultSpaceId() + "/common-env";
        assertEquals(
                200, u.http().put(path, Map.of("name", "REGION", "value", "eu")).status());
        assertEquals(
                200,
                u.http()
                        .put(path, Map.of("name", "TOKEN", "value", "hidden", "secret", true))
                        .status());
        assertEquals(
                200, u.http().put(path, Map.of("name", "REGION", "value", "us")).status());
        JsonNode vars = u.http().get(path).get("variables");
        assertEquals(2, vars.size());
        assertEquals("us", vars.get(0).get("value").asText());
        assertTrue(vars.get(1).get("value").isNull());
        assertTrue(vars.get(1).get("secret").asBoolean());
        assertEquals(
                400,
                u.http().put(path, Map.of("name", "lower-case", "value", "x")).status());
        assertEquals(400, u.http().put(path, Map.of("name", "OK", "value", 1)).status());
        assertEquals(200, u.http().delete(path + "/REGION").status());
        assertEquals(404, u.http().delete(path + "/REGION").status());
        assertEquals(1, u.http().get(path).get("variables").size());
        assertNotNull(vars);
        assertNull(u.http().get(path).get("variables").get(0).get("value").textValue());
    }
}
