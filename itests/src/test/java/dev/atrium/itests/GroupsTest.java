package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Groups driven directly (issue 37): plan is a diff that changes nothing, apply converges, uninstall drains. */
@SharedServer
class GroupsTest {

    static String manifest(String... resourceKeys) {
        StringBuilder m = new StringBuilder(
                "apiVersion: atrium.dev/v1alpha1\nkind: App\nmetadata:\n  name: shelf\nspec:\n  version: \"1\"\n  resources:\n");
        for (String k : resourceKeys) {
            m.append("    ").append(k).append(":\n      type: kv\n");
        }
        return m.toString();
    }

    static String groups(User u) {
        return "/api/spaces/" + u.defaultSpaceId() + "/groups";
    }

    static TreeSet<String> resourceNames(User u) {
        TreeSet<String> names = new TreeSet<>();
        u.http()
                .get("/api/resources")
                .get("resources")
                .forEach(r -> names.add(r.get("name").asText()));
        return names;
    }

    @Test
    void planListsExactlyTheChangesAndChangesNothingThenApplyAndUninstallConverge(AtriumServer server) {
        User u = server.newUser();
        Http.Reply applied =
                u.http().post(groups(u) + "/apply", Map.of("group_name", "shelf", "manifest", manifest("a", "b")));
        assertEquals(200, applied.status(), applied.body());
        assertEquals(2, applied.get("apply_result").get("applied").size(), applied.body());
        JsonNode group = applied.get("group");
        assertTrue(group.get("current_app_deployment_id").isNull(), "groups/apply records no app deployment");
        String id = group.get("id").asText();
        assertEquals(new TreeSet<>(java.util.List.of("shelf-a", "shelf-b")), resourceNames(u));

        String desiredBefore = u.http()
                .get(groups(u) + "/" + id + "/desired")
                .get("desired")
                .get("manifest")
                .asText();
        String inventoryBefore =
                u.http().get(groups(u) + "/" + id).get("inventory").toString();
        Http.Reply plan =
                u.http().post(groups(u) + "/plan", Map.of("group_name", "shelf", "manifest", manifest("a", "c")));
        assertEquals(200, plan.status(), plan.body());
        Map<String, String> actions = new TreeMap<>();
        plan.get("plan")
                .get("changes")
                .forEach(c -> actions.put(
                        c.get("kind").asText() + ":" + c.get("key").asText(),
                        c.get("action").asText()));
        assertEquals(Map.of("resource:a", "unchanged", "resource:b", "delete", "resource:c", "create"), actions);
        assertEquals(1, plan.get("plan").get("summary").get("create").asInt());
        // nothing changed: the resources, the desired manifest, the inventory
        assertEquals(new TreeSet<>(java.util.List.of("shelf-a", "shelf-b")), resourceNames(u));
        assertEquals(
                desiredBefore,
                u.http()
                        .get(groups(u) + "/" + id + "/desired")
                        .get("desired")
                        .get("manifest")
                        .asText());
        assertEquals(
                inventoryBefore,
                u.http().get(groups(u) + "/" + id).get("inventory").toString());

        Http.Reply again = u.http().post(groups(u) + "/" + id + "/apply", Map.of("manifest", manifest("a", "c")));
        assertEquals(200, again.status(), again.body());
        assertEquals(new TreeSet<>(java.util.List.of("shelf-a", "shelf-c")), resourceNames(u));
        assertEquals(
                2,
                u.http().get(groups(u) + "/" + id + "/resources").get("items").size());

        Http.Reply meta =
                u.http().patch(groups(u) + "/" + id + "/metadata", Map.of("metadata", Map.of("team", "books")));
        assertEquals("books", meta.get("group").get("metadata").get("team").asText(), meta.body());

        Http.Reply uninstall = u.http().post(groups(u) + "/uninstall", Map.of("group_name", "shelf"));
        assertEquals(200, uninstall.status(), uninstall.body());
        assertEquals(new TreeSet<String>(), resourceNames(u));
        assertEquals(404, u.http().get(groups(u) + "/" + id).status());
    }

    @Test
    void badManifestsNameTheirPathAndAStrangersGroupIsMissing(AtriumServer server) {
        User u = server.newUser();
        User stranger = server.newUser();
        Http.Reply bad = u.http()
                .post(
                        groups(u) + "/apply",
                        Map.of("group_name", "broken", "manifest", manifest("a").replace("type: kv", "type: teapot")));
        assertEquals(422, bad.status(), bad.body());
        assertTrue(bad.body().contains("spec.resources.a.type"), bad.body());
        Http.Reply created = u.http().post(groups(u), Map.of("name", "mine"));
        assertEquals(201, created.status(), created.body());
        String id = created.get("group").get("id").asText();
        Http.Reply theirs = stranger.http().get("/api/spaces/" + u.defaultSpaceId() + "/groups/" + id);
        Http.Reply missing = u.http().get(groups(u) + "/grp_missing000000000");
        assertEquals(404, theirs.status());
        assertEquals(404, missing.status());
        Http.Reply wrongSpace = stranger.http().get(groups(stranger) + "/" + id);
        assertEquals(404, wrongSpace.status());
        assertEquals(
                missing.get("error").get("message").asText(),
                wrongSpace.get("error").get("message").asText());
        assertEquals(409, u.http().post(groups(u), Map.of("name", "mine")).status());
        assertEquals(400, u.http().post(groups(u), Map.of("name", "Not A Name")).status());
    }

    @Test
    void aGroupAdoptsNothingItDidNotMakeAndResourcesNeedTheirScope(AtriumServer server) {
        User u = server.newUser();
        Http.Reply mine = u.http().post("/api/resources", Map.of("name", "shelf-a", "type", "kv"));
        assertEquals(201, mine.status(), mine.body());
        Http.Reply taken =
                u.http().post(groups(u) + "/apply", Map.of("group_name", "shelf", "manifest", manifest("a")));
        assertEquals(409, taken.status(), taken.body());
        assertTrue(taken.body().contains("did not make"), taken.body());
        Http.Reply uninstall = u.http().post(groups(u) + "/uninstall", Map.of("group_name", "shelf"));
        assertEquals(200, uninstall.status(), uninstall.body());
        assertEquals(
                new TreeSet<>(java.util.List.of("shelf-a")), resourceNames(u), "the resource it did not make stays");

        User limited = server.newUser("repos:write repos:read");
        Http.Reply refused = limited.http()
                .post(groups(limited) + "/apply", Map.of("group_name", "shelf", "manifest", manifest("a")));
        assertEquals(403, refused.status(), refused.body());
        assertTrue(refused.body().contains("files:write"), refused.body());
    }
}
