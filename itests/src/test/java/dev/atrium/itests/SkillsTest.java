package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Skills: the official catalog, custom skills by id and by name under both roots, and the skills context. */
@SharedServer
class SkillsTest {

    static Map<String, Object> skill(String name, String instructions) {
        Map<String, Object> m = new HashMap<>();
        m.put("name", name);
        m.put("description", "When to use " + name);
        m.put("instructions", instructions);
        return m;
    }

    @Test
    void theOfficialCatalogListsShippedSkillsWithTheirInstructions(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.defaultSpaceId();
        JsonNode list = u.http().get(base + "/official-skills").json();
        assertTrue(list.path("total").asInt() >= 5, list.toString());
        List<String> names = new ArrayList<>();
        list.path("skills").forEach(s -> names.add(s.path("id").asText()));
        assertTrue(names.contains("code-review") && names.contains("research"), names.toString());
        JsonNode research = u.http().get(base + "/official-skills/research").get("skill");
        assertEquals("research", research.path("name").asText());
        assertEquals("http_fetch", research.path("tools").get(0).asText());
        assertTrue(research.path("instructions").asText().contains("Cite"), research.toString());
        assertTrue(research.path("official").asBoolean());
        BadInputTest.assertSpecError(u.http().get(base + "/official-skills/no-such-skill"), 404, "NOT_FOUND");
    }

    @Test
    void customSkillsAreManagedByIdAndByNameUnderBothRootsAndEnabledOnesMakeTheContext(AtriumServer server) {
        User u = server.newUser();
        String spaces = "/api/spaces/" + u.defaultSpaceId() + "/skills";
        String workspaces = "/api/workspaces/" + u.defaultSpaceId() + "/skills";
        Map<String, Object> body = skill("tone", "Answer briefly.");
        body.put("tools", List.of("http_fetch"));
        Http.Reply created = u.http().post(spaces, body);
        assertEquals(201, created.status(), created.body());
        JsonNode s = created.get("skill");
        String id = s.path("id").asText();
        assertTrue(s.path("enabled").asBoolean());
        assertEquals(s, u.http().get(workspaces + "/id/" + id).get("skill"), "the alias serves the same skill");
        assertEquals(s, u.http().get(spaces + "/tone").get("skill"));

        // duplicate name: 409 on create, and on a rename by id into a taken name
        BadInputTest.assertSpecError(u.http().post(workspaces, skill("tone", "Other")), 409, "CONFLICT");
        Http.Reply upserted = u.http().put(workspaces + "/review", Map.of("from_official", "code-review"));
        assertEquals(201, upserted.status(), upserted.body());
        assertEquals("code-review", upserted.get("skill").path("source").asText());
        assertTrue(upserted.get("skill").path("instructions").asText().contains("bugs first"));
        Http.Reply replaced =
                u.http().put(spaces + "/review", Map.of("description", "Mine", "instructions", "Be kind."));
        assertEquals(200, replaced.status(), replaced.body());
        assertEquals(upserted.get("skill").path("id"), replaced.get("skill").path("id"));
        assertEquals("Be kind.", replaced.get("skill").path("instructions").asText());
        BadInputTest.assertSpecError(u.http().put(spaces + "/id/" + id, skill("review", "x")), 409, "CONFLICT");
        Http.Reply renamed = u.http().put(spaces + "/id/" + id, skill("voice", "Answer briefly, in French."));
        assertEquals(200, renamed.status(), renamed.body());
        assertEquals("voice", renamed.get("skill").path("name").asText());
        BadInputTest.assertSpecError(u.http().get(spaces + "/tone"), 404, "NOT_FOUND");

        JsonNode context = u.http()
                .get("/api/spaces/" + u.defaultSpaceId() + "/skills-context")
                .json();
        assertEquals(List.of("review", "voice"), names(context.path("skills")));
        assertTrue(context.path("context").asText().contains("## voice")
                && context.path("context").asText().contains("in French"));
        assertFalse(context.path("truncated").asBoolean());

        // PATCH toggles: {} flips it, {"enabled": b} sets it
        Http.Reply off = u.http().patch(spaces + "/voice", Map.of());
        assertEquals(200, off.status(), off.body());
        assertFalse(off.get("skill").path("enabled").asBoolean());
        assertEquals(
                List.of("review"),
                names(u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/skills-context")
                        .get("skills")));
        assertTrue(u.http()
                .patch(workspaces + "/id/" + id, Map.of("enabled", true))
                .get("skill")
                .path("enabled")
                .asBoolean());
        assertTrue(u.http()
                .patch(workspaces + "/id/" + id, Map.of("enabled", true))
                .get("skill")
                .path("enabled")
                .asBoolean());

        assertEquals(2, u.http().get(workspaces).get("total").asInt());
        assertEquals(200, u.http().delete(workspaces + "/voice").status());
        assertEquals(
                200,
                u.http()
                        .delete(spaces + "/id/"
                                + upserted.get("skill").path("id").asText())
                        .status());
        assertEquals(0, u.http().get(spaces).get("total").asInt());
        assertEquals(
                "",
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/skills-context")
                        .get("context")
                        .asText());
    }

    static List<String> names(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void everySkillRouteGivesAStrangerTheSame404AsAMissingOne(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String id = owner.http()
                .post("/api/spaces/" + owner.defaultSpaceId() + "/skills", skill("kept", "x"))
                .get("skill")
                .path("id")
                .asText();
        String before = owner.http()
                .get("/api/spaces/" + owner.defaultSpaceId() + "/skills")
                .body();
        for (String root : List.of("/api/spaces/", "/api/workspaces/")) {
            String skills = root + owner.defaultSpaceId() + "/skills";
            BadInputTest.assertSpecError(stranger.http().get(skills), 404, "NOT_FOUND");
            for (String path : List.of(skills + "/id/" + id, skills + "/kept")) {
                BadInputTest.assertSpecError(stranger.http().get(path), 404, "NOT_FOUND");
                BadInputTest.assertSpecError(stranger.http().patch(path, Map.of("enabled", false)), 404, "NOT_FOUND");
                BadInputTest.assertSpecError(stranger.http().put(path, skill("kept", "theirs")), 404, "NOT_FOUND");
                BadInputTest.assertSpecError(stranger.http().delete(path), 404, "NOT_FOUND");
            }
            BadInputTest.assertSpecError(stranger.http().post(skills, skill("theirs", "x")), 404, "NOT_FOUND");
            // a stranger's own space does not reach the owner's skill either
            BadInputTest.assertSpecError(
                    stranger.http().get(root + stranger.defaultSpaceId() + "/skills/id/" + id), 404, "NOT_FOUND");
        }
        String base = "/api/spaces/" + owner.defaultSpaceId();
        for (String path :
                List.of(base + "/official-skills", base + "/official-skills/research", base + "/skills-context")) {
            BadInputTest.assertSpecError(stranger.http().get(path), 404, "NOT_FOUND");
        }
        assertEquals(
                before,
                owner.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/skills")
                        .body());
    }

    @Test
    void badInputIsA400SayingWhatIsWrongAndChangesNothing(AtriumServer server) {
        User u = server.newUser();
        String skills = "/api/spaces/" + u.defaultSpaceId() + "/skills";
        String id = u.http()
                .post(skills, skill("kept", "x"))
                .get("skill")
                .path("id")
                .asText();
        String before = u.http().get(skills).body();
        List<Object> bodies = new ArrayList<>();
        bodies.add(Map.of());
        bodies.add(skill("Bad Name", "x"));
        bodies.add(skill("-dash", "x"));
        bodies.add(skill("x".repeat(65), "x"));
        bodies.add(skill("ok", ""));
        bodies.add(skill("ok", "x".repeat(20_001)));
        Map<String, Object> tools = skill("ok", "x");
        tools.put("tools", "http_fetch");
        bodies.add(tools);
        Map<String, Object> badTool = skill("ok", "x");
        badTool.put("tools", List.of("Bad Tool"));
        bodies.add(badTool);
        Map<String, Object> unknown = skill("ok", "x");
        unknown.put("colour", "red");
        bodies.add(unknown);
        Map<String, Object> enabled = skill("ok", "x");
        enabled.put("enabled", "yes");
        bodies.add(enabled);
        bodies.add(Map.of("from_official", "no-such-skill"));
        bodies.add("[]");
        bodies.add("{\"name\":");
        for (Object body : bodies) {
            BadInputTest.assertSpecError(u.http().post(skills, body), 400, "BAD_REQUEST");
            BadInputTest.assertSpecError(u.http().put(skills + "/id/" + id, body), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(
                u.http().put(skills + "/Bad%20Name", Map.of("description", "d", "instructions", "i")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(u.http().put(skills + "/kept", skill("other", "x")), 400, "BAD_REQUEST");
        Map<String, Object> nullEnabled = new LinkedHashMap<>();
        nullEnabled.put("enabled", null);
        for (Object patch : List.of(Map.of("enabled", "no"), Map.of("name", "other"), nullEnabled, "[]")) {
            BadInputTest.assertSpecError(u.http().patch(skills + "/id/" + id, patch), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(u.http().get(skills + "?limit=1000"), 400, "BAD_REQUEST");
        assertEquals(before, u.http().get(skills).body());
    }
}
