package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@SharedServer
class ShortcutsTest {

    static List<String> ids(JsonNode list) {
        List<String> ids = new ArrayList<>();
        list.forEach(s -> ids.add(s.path("id").asText()));
        return ids;
    }

    static List<Integer> positions(JsonNode list) {
        List<Integer> p = new ArrayList<>();
        list.forEach(s -> p.add(s.path("position").asInt()));
        return p;
    }

    static String shortcut(User u, String title) {
        Http.Reply r = u.http().post("/api/shortcuts", Map.of("title", title, "url", "/threads/" + title));
        assertEquals(201, r.status(), r.body());
        return r.get("shortcut").path("id").asText();
    }

    @Test
    void shortcutsAreCreatedUpdatedReorderedAndDeletedKeepingADenseOrder(AtriumServer server) {
        User u = server.newUser();
        Http.Reply created = u.http()
                .post("/api/shortcuts", Map.of("title", "  Docs ", "url", "https://example.com/docs", "icon", "book"));
        assertEquals(201, created.status(), created.body());
        JsonNode s = created.get("shortcut");
        assertEquals(
                Set.of("id", "title", "url", "icon", "position", "created_at", "updated_at"), WorkspacesTest.fields(s));
        assertEquals("Docs", s.path("title").asText());
        assertEquals(0, s.path("position").asInt());
        String a = s.path("id").asText();
        String b = shortcut(u, "b");
        String c = shortcut(u, "c");
        String d = shortcut(u, "d");
        JsonNode list = u.http().get("/api/shortcuts").json();
        assertEquals(List.of(a, b, c, d), ids(list.get("shortcuts")));
        assertEquals(List.of(0, 1, 2, 3), positions(list.get("shortcuts")));

        Http.Reply reordered = u.http().post("/api/shortcuts/reorder", Map.of("ids", List.of(d, b, a, c)));
        assertEquals(200, reordered.status(), reordered.body());
        assertEquals(List.of(d, b, a, c), ids(reordered.get("shortcuts")));
        assertEquals(List.of(0, 1, 2, 3), positions(reordered.get("shortcuts")));
        assertEquals(List.of(d, b, a, c), ids(u.http().get("/api/shortcuts").get("shortcuts")));

        Http.Reply updated = u.http().put("/api/shortcuts/" + b, Map.of("title", "Bee", "url", "/spaces/x"));
        assertEquals(200, updated.status(), updated.body());
        assertEquals("Bee", updated.get("shortcut").path("title").asText());
        assertTrue(updated.get("shortcut").path("icon").isNull());
        assertEquals(1, updated.get("shortcut").path("position").asInt());

        assertEquals(200, u.http().delete("/api/shortcuts/" + b).status());
        JsonNode after = u.http().get("/api/shortcuts").get("shortcuts");
        assertEquals(List.of(d, a, c), ids(after));
        assertEquals(List.of(0, 1, 2), positions(after));
        assertEquals(
                3, positions(u.http().get("/api/shortcuts").get("shortcuts")).size());
        String e = shortcut(u, "e");
        assertEquals(List.of(d, a, c, e), ids(u.http().get("/api/shortcuts").get("shortcuts")));
        BadInputTest.assertSpecError(u.http().delete("/api/shortcuts/" + b), 404, "NOT_FOUND");
    }

    @Test
    void workspaceGroupsHoldOrderedItems(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.defaultSpaceId() + "/shortcuts/groups";
        Http.Reply created = u.http()
                .post(
                        base,
                        Map.of(
                                "name",
                                "Ops",
                                "items",
                                List.of(
                                        Map.of("title", "Runbook", "url", "https://example.com/runbook"),
                                        Map.of("title", "Dashboard", "url", "/apps/dash", "icon", "chart"))));
        assertEquals(201, created.status(), created.body());
        JsonNode g = created.get("group");
        assertEquals(
                Set.of("id", "space_id", "name", "position", "items", "created_at", "updated_at"),
                WorkspacesTest.fields(g));
        assertEquals(u.defaultSpaceId(), g.path("space_id").asText());
        assertEquals(List.of(0, 1), positions(g.path("items")));
        String ops = g.path("id").asText();
        String dev = u.http()
                .post(base, Map.of("name", "Dev"))
                .get("group")
                .path("id")
                .asText();
        String docs = u.http()
                .post(base, Map.of("name", "Docs"))
                .get("group")
                .path("id")
                .asText();
        assertEquals(List.of(ops, dev, docs), ids(u.http().get(base).get("groups")));

        Http.Reply moved = u.http().patch(base + "/" + docs, Map.of("position", 0, "name", "Documentation"));
        assertEquals(200, moved.status(), moved.body());
        assertEquals("Documentation", moved.get("group").path("name").asText());
        JsonNode groups = u.http().get(base).get("groups");
        assertEquals(List.of(docs, ops, dev), ids(groups));
        assertEquals(List.of(0, 1, 2), positions(groups));
        assertEquals(2, groups.get(1).path("items").size());

        Http.Reply item = u.http()
                .post(base + "/" + ops + "/items", Map.of("title", "Pager", "url", "https://example.com/pager"));
        assertEquals(201, item.status(), item.body());
        assertEquals(2, item.get("item").path("position").asInt());
        String first = g.path("items").get(0).path("id").asText();
        assertEquals(200, u.http().delete(base + "/" + ops + "/items/" + first).status());
        JsonNode opsNow = u.http().get(base + "/" + ops).get("group");
        assertEquals(
                List.of("Dashboard", "Pager"),
                List.of(
                        opsNow.path("items").get(0).path("title").asText(),
                        opsNow.path("items").get(1).path("title").asText()));
        assertEquals(List.of(0, 1), positions(opsNow.path("items")));

        assertEquals(200, u.http().delete(base + "/" + docs).status());
        JsonNode left = u.http().get(base).get("groups");
        assertEquals(List.of(ops, dev), ids(left));
        assertEquals(List.of(0, 1), positions(left));
        BadInputTest.assertSpecError(u.http().get(base + "/" + docs), 404, "NOT_FOUND");
    }

    @Test
    void anotherPrincipalsShortcutsAndGroupsAreTheSame404AsMissingOnes(AtriumServer server) {
        User u = server.newUser();
        User stranger = server.newUser();
        String mine = shortcut(u, "mine");
        String missing = SweepFixtures.missingLike(mine);
        String base = "/api/spaces/" + u.defaultSpaceId() + "/shortcuts/groups";
        JsonNode g = u.http()
                .post(base, Map.of("name", "G", "items", List.of(Map.of("title", "i", "url", "/x"))))
                .get("group");
        String group = g.path("id").asText();
        String item = g.path("items").get(0).path("id").asText();
        String before =
                u.http().get("/api/shortcuts").body() + u.http().get(base).body();

        String theirs = shortcut(stranger, "theirs");
        assertSame404(
                stranger.http().put("/api/shortcuts/" + mine, Map.of("title", "x", "url", "/x")),
                stranger.http().put("/api/shortcuts/" + missing, Map.of("title", "x", "url", "/x")));
        assertSame404(
                stranger.http().delete("/api/shortcuts/" + mine),
                stranger.http().delete("/api/shortcuts/" + missing));
        assertSame404(
                stranger.http().post("/api/shortcuts/reorder", Map.of("ids", List.of(mine))),
                stranger.http().post("/api/shortcuts/reorder", Map.of("ids", List.of(missing))));
        assertSame404(
                stranger.http().post("/api/shortcuts/reorder", Map.of("ids", List.of(theirs, mine))),
                stranger.http().post("/api/shortcuts/reorder", Map.of("ids", List.of(theirs, missing))));
        assertEquals(List.of(theirs), ids(stranger.http().get("/api/shortcuts").get("shortcuts")));

        // the workspace itself, the group in it, an item in it: each the missing answer
        String strangerBase = "/api/spaces/" + stranger.defaultSpaceId() + "/shortcuts/groups";
        String missingSpace = "/api/spaces/" + SweepFixtures.missingLike(u.defaultSpaceId()) + "/shortcuts/groups";
        assertSame404(stranger.http().get(base), stranger.http().get(missingSpace));
        assertSame404(
                stranger.http().post(base, Map.of("name", "x")),
                stranger.http().post(missingSpace, Map.of("name", "x")));
        assertSame404(stranger.http().get(base + "/" + group), stranger.http().get(missingSpace + "/" + group));
        assertSame404(
                stranger.http().get(strangerBase + "/" + group),
                stranger.http().get(strangerBase + "/" + SweepFixtures.missingLike(group)));
        assertSame404(
                stranger.http().patch(strangerBase + "/" + group, Map.of("name", "x")),
                stranger.http().patch(strangerBase + "/" + SweepFixtures.missingLike(group), Map.of("name", "x")));
        assertSame404(
                stranger.http().delete(strangerBase + "/" + group),
                stranger.http().delete(strangerBase + "/" + SweepFixtures.missingLike(group)));
        assertSame404(
                stranger.http().post(strangerBase + "/" + group + "/items", Map.of("title", "x", "url", "/x")),
                stranger.http()
                        .post(
                                strangerBase + "/" + SweepFixtures.missingLike(group) + "/items",
                                Map.of("title", "x", "url", "/x")));
        assertSame404(
                stranger.http().delete(base + "/" + group + "/items/" + item),
                stranger.http().delete(missingSpace + "/" + group + "/items/" + item));
        // the owner addressing an item through another of its groups: missing too
        String other =
                u.http().post(base, Map.of("name", "H")).get("group").path("id").asText();
        BadInputTest.assertSpecError(u.http().delete(base + "/" + other + "/items/" + item), 404, "NOT_FOUND");
        u.http().delete(base + "/" + other);
        assertEquals(
                before,
                u.http().get("/api/shortcuts").body() + u.http().get(base).body(),
                "the stranger changed nothing");
    }

    static void assertSame404(Http.Reply foreign, Http.Reply missing) {
        BadInputTest.assertSpecError(foreign, 404, "NOT_FOUND");
        assertEquals(missing.status(), foreign.status());
        assertEquals(missing.json().path("error"), foreign.json().path("error"));
    }

    @Test
    void badInputIsA4xxWithTheSpecBodyAndChangesNothing(AtriumServer server) {
        User u = server.newUser();
        String a = shortcut(u, "a");
        String b = shortcut(u, "b");
        String base = "/api/spaces/" + u.defaultSpaceId() + "/shortcuts/groups";
        JsonNode g = u.http().post(base, Map.of("name", "G")).get("group");
        String group = g.path("id").asText();
        String before =
                u.http().get("/api/shortcuts").body() + u.http().get(base).body();
        List<Object> badLinks = List.of(
                Map.of(),
                Map.of("title", "", "url", "/x"),
                Map.of("title", "x"),
                Map.of("title", "x", "url", "javascript:alert(1)"),
                Map.of("title", "x", "url", "//evil.example/x"),
                Map.of("title", "x", "url", "data:text/html,hi"),
                Map.of("title", "x", "url", "ftp://h/x"),
                Map.of("title", "x", "url", "/a b"),
                Map.of("title", "x".repeat(101), "url", "/x"),
                Map.of("title", 5, "url", "/x"),
                Map.of("title", "x", "url", "/x", "icon", "Bad Icon"),
                Map.of("title", "x", "url", "/x", "colour", "red"));
        for (Object body : badLinks) {
            BadInputTest.assertSpecError(u.http().post("/api/shortcuts", body), 400, "BAD_REQUEST");
            BadInputTest.assertSpecError(u.http().put("/api/shortcuts/" + a, body), 400, "BAD_REQUEST");
            BadInputTest.assertSpecError(u.http().post(base + "/" + group + "/items", body), 400, "BAD_REQUEST");
        }
        for (Object body : List.of(
                Map.of(),
                Map.of("ids", "x"),
                Map.of("ids", List.of(a)),
                Map.of("ids", List.of(a, a)),
                Map.of("ids", List.of(a, b, a)),
                Map.of("ids", List.of(1, 2)),
                Map.of("ids", List.of(b, a), "extra", true))) {
            BadInputTest.assertSpecError(u.http().post("/api/shortcuts/reorder", body), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(
                u.http().send("POST", "/api/shortcuts", "{\"title\":", "application/json"), 400, "BAD_REQUEST");
        for (Object body : List.of(
                Map.of(),
                Map.of("name", ""),
                Map.of("name", "x", "items", "y"),
                Map.of("name", "x", "items", List.of(Map.of("title", "t"))),
                Map.of("name", "x", "colour", "red"))) {
            BadInputTest.assertSpecError(u.http().post(base, body), 400, "BAD_REQUEST");
        }
        for (Object body : List.of(
                Map.of(),
                Map.of("position", -1),
                Map.of("position", 5),
                Map.of("position", "0"),
                Map.of("position", 1.5),
                Map.of("name", " "),
                Map.of("items", List.of()))) {
            BadInputTest.assertSpecError(u.http().patch(base + "/" + group, body), 400, "BAD_REQUEST");
        }
        assertEquals(
                before,
                u.http().get("/api/shortcuts").body() + u.http().get(base).body());
    }
}
