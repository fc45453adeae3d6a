package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Operators switch capabilities off and on at run time; a disabled capability's data stays. */
@SharedServer
class FeatureSwitchTest {

    static JsonNode feature(AtriumServer server, String name) {
        for (JsonNode f : server.operator().get("/admin/features").get("features")) {
            if (f.get("name").asText().equals(name)) {
                return f;
            }
        }
        throw new AssertionError("no feature " + name);
    }

    /** Polls until {@code path} answers {@code status} (a bundle start and the whiteboard's rebuild take a moment). */
    static Http.Reply await(Http http, String path, int status) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        Http.Reply r = http.get(path);
        while (r.status() != status && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            r = http.get(path);
        }
        return r;
    }

    @Test
    void aDisabledCapabilityAnswers404NamingItAndServesTheSameDataWhenEnabledAgain(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String space = "/api/spaces/" + u.defaultSpaceId();
        String memory = u.http()
                .post(space + "/memories", Map.of("content", "kept while disabled"))
                .get("memory")
                .get("id")
                .asText();
        assertTrue(feature(server, "memories").get("enabled").asBoolean());
        try {
            Http.Reply off = server.operator().post("/admin/features/memories/disable", Map.of());
            assertEquals(200, off.status(), off.body());
            assertFalse(off.get("feature").get("enabled").asBoolean());
            for (String path :
                    List.of(space + "/memories", space + "/memories/search?q=kept", "/api/memories/" + memory)) {
                Http.Reply r = u.http().get(path);
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertTrue(
                        r.json().get("error").get("message").asText().contains("memories capability is disabled"),
                        r.body());
            }
            BadInputTest.assertSpecError(u.http().post(space + "/memories", Map.of("content", "x")), 404, "NOT_FOUND");
            assertEquals(200, u.http().get(space).status(), "other capabilities keep serving");
            Http.Reply health = await(server.anonymous(), "/healthz", 200);
            assertEquals(
                    200, health.status(), "a disabled feature does not keep the server unhealthy: " + health.body());
            assertFalse(u.http().get(space + "/sidebar-items").body().contains("memories"));
            assertTrue(
                    Files.readString(server.data.resolve("features.json")).contains("memories"),
                    "the disabled set is persisted");
            JsonNode bundle = bundle(server, "dev.atrium.memories");
            assertEquals("RESOLVED", bundle.get("state").asText());
            assertEquals("memories", bundle.get("feature").asText());
        } finally {
            Http.Reply on = server.operator().post("/admin/features/memories/enable", Map.of());
            assertEquals(200, on.status(), on.body());
        }
        assertTrue(feature(server, "memories").get("enabled").asBoolean());
        Http.Reply back = await(u.http(), space + "/memories", 200);
        assertEquals(200, back.status(), back.body());
        assertEquals(
                "kept while disabled",
                back.get("memories").get(0).get("content").asText());
        assertEquals(200, await(u.http(), "/api/memories/" + memory, 200).status());
        assertEquals(
                "ACTIVE", bundle(server, "dev.atrium.memories").get("state").asText());
    }

    /** A run that fails at once (the shared server's model answers nobody); returns when it has. */
    static void failedRun(User u) throws InterruptedException {
        String thread = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "t"))
                .get("thread")
                .get("id")
                .asText();
        String run = u.http()
                .post("/api/threads/" + thread + "/runs", Map.of("input", "hi"))
                .get("run")
                .get("id")
                .asText();
        long deadline = System.currentTimeMillis() + 30_000;
        while (!u.http()
                .get("/api/runs/" + run)
                .get("run")
                .get("status")
                .asText()
                .equals("failed")) {
            assertTrue(System.currentTimeMillis() < deadline, "run " + run + " did not fail");
            Thread.sleep(50);
        }
    }

    @Test
    void notificationsCanBeDisabledWhileRunsGoOnAndComeBackWithTheirData(AtriumServer server) throws Exception {
        User u = server.newUser();
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/spaces/" + u.defaultSpaceId() + "/model",
                                Map.of("provider", "openai", "model", "nobody"))
                        .status());
        assertTrue(
                server.operator().get("/admin/routes").body().contains("/api/notifications/unread-count"),
                "the sweep sees the routes");
        failedRun(u);
        Http.Reply before = await(u.http(), "/api/notifications/unread-count", 200);
        long deadline = System.currentTimeMillis() + 10_000;
        while (u.http()
                                .get("/api/notifications/unread-count")
                                .get("unread_count")
                                .asInt()
                        < 1
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        String kept = u.http()
                .get("/api/notifications")
                .get("notifications")
                .get(0)
                .get("id")
                .asText();
        assertEquals(
                200,
                u.http()
                        .patch("/api/notifications/settings", Map.of("types", Map.of("run.finished", false)))
                        .status());
        assertTrue(feature(server, "notifications").get("enabled").asBoolean());
        try {
            Http.Reply off = server.operator().post("/admin/features/notifications/disable", Map.of());
            assertEquals(200, off.status(), off.body());
            for (String path : List.of(
                    "/api/notifications",
                    "/api/notifications/unread-count",
                    "/api/notifications/settings",
                    "/api/notifications/sse")) {
                Http.Reply r = await(u.http(), path, 404);
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertTrue(
                        r.json().get("error").get("message").asText().contains("notifications capability is disabled"),
                        r.body());
            }
            assertEquals(
                    "ACTIVE",
                    bundle(server, "dev.atrium.notifications.api").get("state").asText(),
                    "runs is wired to it");
            // a run's end while notifications are off: the run fails as it would, posting is skipped without an error
            failedRun(u);
            Http.Reply health = await(server.anonymous(), "/healthz", 200);
            assertEquals(200, health.status(), "runs stays ready without notifications: " + health.body());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/notifications/enable", Map.of())
                            .status());
        }
        Http.Reply back = await(u.http(), "/api/notifications", 200);
        assertEquals(200, back.status(), back.body());
        assertEquals(1, back.get("total").asInt(), "kept, and nothing posted while disabled: " + back.body());
        assertEquals(kept, back.get("notifications").get(0).get("id").asText());
        assertFalse(u.http()
                .get("/api/notifications/settings")
                .get("settings")
                .get("types")
                .get("run.finished")
                .asBoolean());
        failedRun(u);
        deadline = System.currentTimeMillis() + 10_000;
        while (u.http().get("/api/notifications").get("total").asInt() < 2 && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(2, u.http().get("/api/notifications").get("total").asInt(), "posting works again once enabled");
        assertEquals(200, before.status());
    }

    /**
     * Polls until {@code /api/openapi.json} has {@code path} or not, as {@code present} says: the document is made
     * once per change of the routes, so a stale one would keep a disabled capability's routes.
     */
    static boolean documented(AtriumServer server, String path, boolean present) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        boolean has =
                server.anonymous().get("/api/openapi.json").json().get("paths").has(path);
        while (has != present && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
            has = server.anonymous()
                    .get("/api/openapi.json")
                    .json()
                    .get("paths")
                    .has(path);
        }
        return has;
    }

    @Test
    void shortcutsCanBeDisabledAndComeBackWithTheirData(AtriumServer server) throws Exception {
        assertTrue(documented(server, "/api/shortcuts", true), "the API reference has the shortcuts routes");
        User u = server.newUser();
        String groups = "/api/spaces/" + u.defaultSpaceId() + "/shortcuts/groups";
        String shortcut = u.http()
                .post("/api/shortcuts", Map.of("title", "kept", "url", "/kept"))
                .get("shortcut")
                .get("id")
                .asText();
        String group = u.http()
                .post(groups, Map.of("name", "kept", "items", List.of(Map.of("title", "i", "url", "/i"))))
                .get("group")
                .get("id")
                .asText();
        String listed =
                u.http().get("/api/shortcuts").body() + u.http().get(groups).body();
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/shortcuts/disable", Map.of())
                            .status());
            for (String path : List.of("/api/shortcuts", groups, groups + "/" + group)) {
                Http.Reply r = await(u.http(), path, 404);
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertTrue(
                        r.json().get("error").get("message").asText().contains("shortcuts capability is disabled"),
                        r.body());
            }
            BadInputTest.assertSpecError(
                    u.http().send("DELETE", "/api/shortcuts/" + shortcut, null, null), 404, "NOT_FOUND");
            assertEquals(
                    200, u.http().get("/api/spaces/" + u.defaultSpaceId()).status(), "other capabilities keep serving");
            assertFalse(
                    documented(server, "/api/shortcuts", false),
                    "the API reference no longer has the disabled capability's routes");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/shortcuts/enable", Map.of())
                            .status());
        }
        assertTrue(documented(server, "/api/shortcuts", true), "the API reference has the shortcuts routes again");
        assertEquals(200, await(u.http(), groups, 200).status());
        assertEquals(200, await(u.http(), "/api/shortcuts", 200).status());
        assertEquals(
                listed,
                u.http().get("/api/shortcuts").body() + u.http().get(groups).body());
    }

    @Test
    void remindersCanBeDisabledAndComeBackWithTheirData(AtriumServer server) throws Exception {
        User u = server.newUser();
        String list = "/api/spaces/" + u.defaultSpaceId() + "/reminders";
        String id = u.http()
                .post(list, Map.of("title", "kept", "rrule", "FREQ=DAILY", "time_zone", "Europe/Paris"))
                .get("reminder")
                .get("id")
                .asText();
        String before = u.http().get("/api/reminders/" + id).body();
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/reminders/disable", Map.of())
                            .status());
            for (String path : List.of(list, "/api/reminders/" + id)) {
                Http.Reply r = await(u.http(), path, 404);
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertTrue(
                        r.json().get("error").get("message").asText().contains("reminders capability is disabled"),
                        r.body());
            }
            BadInputTest.assertSpecError(u.http().post("/api/reminders/" + id + "/trigger", null), 404, "NOT_FOUND");
            assertEquals(
                    "RESOLVED",
                    bundle(server, "dev.atrium.reminders").get("state").asText(),
                    "its scheduler stopped with it");
            Http.Reply health = await(server.anonymous(), "/healthz", 200);
            assertEquals(200, health.status(), health.body());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/reminders/enable", Map.of())
                            .status());
        }
        assertEquals(before, await(u.http(), "/api/reminders/" + id, 200).body());
        assertEquals(
                200, await(server.anonymous(), "/healthz", 200).status(), "ready again once its routes are served");
    }

    @Test
    void skillsCanBeDisabledAndComeBackWithTheirData(AtriumServer server) throws Exception {
        User u = server.newUser();
        String skills = "/api/spaces/" + u.defaultSpaceId() + "/skills";
        assertEquals(
                201,
                u.http()
                        .post(skills, Map.of("name", "kept", "description", "d", "instructions", "i"))
                        .status());
        String before = u.http().get(skills).body()
                + u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/skills-context")
                        .body();
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/skills/disable", Map.of())
                            .status());
            for (String path : List.of(
                    skills,
                    skills + "/kept",
                    "/api/workspaces/" + u.defaultSpaceId() + "/skills",
                    "/api/spaces/" + u.defaultSpaceId() + "/official-skills",
                    "/api/spaces/" + u.defaultSpaceId() + "/skills-context")) {
                Http.Reply r = await(u.http(), path, 404);
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertTrue(
                        r.json().get("error").get("message").asText().contains("skills capability is disabled"),
                        r.body());
            }
            assertEquals(
                    200, u.http().get("/api/spaces/" + u.defaultSpaceId()).status(), "other capabilities keep serving");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/skills/enable", Map.of())
                            .status());
        }
        assertEquals(200, await(u.http(), skills, 200).status());
        assertEquals(
                200,
                await(u.http(), "/api/spaces/" + u.defaultSpaceId() + "/skills-context", 200)
                        .status());
        assertEquals(
                before,
                u.http().get(skills).body()
                        + u.http()
                                .get("/api/spaces/" + u.defaultSpaceId() + "/skills-context")
                                .body());
        assertEquals(
                200, await(server.anonymous(), "/healthz", 200).status(), "ready again once its routes are served");
    }

    @Test
    void mcpCanBeDisabledAndComeBackWithItsServers(AtriumServer server) throws Exception {
        User u = server.newUser();
        String list = "/api/mcp/servers?space_id=" + u.defaultSpaceId();
        String id = u.http()
                .post(
                        "/api/mcp/servers",
                        Map.of("space_id", u.defaultSpaceId(), "name", "kept", "url", TinyMcpServer.url()))
                .get("server")
                .get("id")
                .asText();
        String before = u.http().get(list).body();
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/mcp/disable", Map.of())
                            .status());
            for (String path : List.of(list, "/api/mcp/servers/" + id + "/tools")) {
                Http.Reply r = await(u.http(), path, 404);
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertTrue(
                        r.json().get("error").get("message").asText().contains("mcp capability is disabled"), r.body());
            }
            BadInputTest.assertSpecError(
                    u.http().patch("/api/mcp/servers/" + id, Map.of("enabled", false)), 404, "NOT_FOUND");
            assertEquals(
                    "RESOLVED", bundle(server, "dev.atrium.mcp").get("state").asText());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/mcp/enable", Map.of())
                            .status());
        }
        assertEquals(before, await(u.http(), list, 200).body());
        assertEquals(
                200, await(u.http(), "/api/mcp/servers/" + id + "/tools", 200).status());
        assertEquals(
                200, await(server.anonymous(), "/healthz", 200).status(), "ready again once its routes are served");
    }

    @Test
    void theOAuthServersRoutesComeFromItsBundlesDeclarationLikeEveryOthers(AtriumServer server) throws Exception {
        User u = server.newUser();
        assertEquals(200, u.http().get("/api/me/oauth/consents").status());
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/oauth/disable", Map.of())
                            .status());
            Http.Reply r = u.http().get("/api/me/oauth/consents");
            BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
            assertTrue(
                    r.json().get("error").get("message").asText().contains("oauth capability is disabled"), r.body());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/oauth/enable", Map.of())
                            .status());
        }
        assertEquals(200, await(u.http(), "/api/me/oauth/consents", 200).status());
    }

    @Test
    void disablingACapabilityLeavesItsApiBundleActiveForTheCapabilitiesWiredToIt(AtriumServer server) throws Exception {
        try {
            Http.Reply off = server.operator().post("/admin/features/threads/disable", Map.of());
            assertEquals(200, off.status(), off.body());
            assertEquals(
                    "RESOLVED",
                    bundle(server, "dev.atrium.threads").get("state").asText());
            JsonNode api = bundle(server, "dev.atrium.threads.api");
            assertEquals("ACTIVE", api.get("state").asText(), "runs is wired to it");
            assertEquals("threads", api.get("feature").asText());
            assertEquals(
                    "ACTIVE",
                    bundle(server, "dev.atrium.runs").get("state").asText(),
                    "runs stays resolved and started");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/threads/enable", Map.of())
                            .status());
        }
        Http.Reply health = await(server.anonymous(), "/healthz", 200);
        assertEquals(200, health.status(), health.body());
    }

    static JsonNode bundle(AtriumServer server, String symbolicName) {
        for (JsonNode b : server.operator().get("/admin/bundles").get("bundles")) {
            if (b.get("symbolic_name").asText().equals(symbolicName)) {
                return b;
            }
        }
        throw new AssertionError("no bundle " + symbolicName);
    }

    @Test
    void adminHealthListsWhatIsNotReady(AtriumServer server) {
        JsonNode health = server.operator().get("/admin/health").json();
        assertEquals("ok", health.get("status").asText(), health.toString());
        assertEquals(0, health.get("problems").size());
        assertTrue(health.get("capabilities").toString().contains("dev.atrium.memories"), health.toString());
        BadInputTest.assertSpecError(server.newUser().http().get("/admin/health"), 401, "UNAUTHORIZED");
    }

    @Test
    void featureAdministrationIsForTheOperatorOnly(AtriumServer server) {
        User u = server.newUser();
        BadInputTest.assertSpecError(u.http().get("/admin/features"), 401, "UNAUTHORIZED");
        BadInputTest.assertSpecError(u.http().post("/admin/features/memories/disable", Map.of()), 401, "UNAUTHORIZED");
        BadInputTest.assertSpecError(server.anonymous().get("/admin/bundles"), 401, "UNAUTHORIZED");
        Http.Reply unknown = server.operator().post("/admin/features/kernel/disable", Map.of());
        BadInputTest.assertSpecError(unknown, 404, "NOT_FOUND");
        assertTrue(unknown.body().contains("the kernel is not a feature"), unknown.body());
        assertTrue(feature(server, "memories").get("enabled").asBoolean());
    }

    @Test
    void theCliListsAndSwitchesFeaturesAndListsBundles(AtriumServer server) throws Exception {
        String[] at = {"--url", server.base(), "--data", server.data.toString()};
        Commands.Result features = Commands.atrium(concat(new String[] {"features"}, at));
        assertEquals(0, features.exit(), features.stderr());
        assertTrue(features.stdout().startsWith("FEATURE"), features.stdout());
        assertTrue(
                features.stdout().matches("(?s).*\\nmemories +enabled +dev\\.atrium\\.memories \\(ACTIVE\\).*"),
                features.stdout());
        // an optional backend without its configuration is there but does nothing: it says so
        assertTrue(
                features.stdout()
                        .matches("(?s).*\\nblob-s3 +enabled, not configured +dev\\.atrium\\.blob\\.s3 \\(ACTIVE\\).*"),
                features.stdout());
        assertEquals(
                "enabled, not configured",
                feature(server, "blob-s3").path("status").asText());
        assertEquals("enabled", feature(server, "memories").path("status").asText());

        Commands.Result bundles = Commands.atrium(concat(new String[] {"bundles"}, at));
        assertEquals(0, bundles.exit(), bundles.stderr());
        assertTrue(bundles.stdout().matches("(?s).*dev\\.atrium\\.kernel +\\S+ +ACTIVE +-.*"), bundles.stdout());
        assertTrue(
                bundles.stdout().matches("(?s).*dev\\.atrium\\.memories +\\S+ +ACTIVE +memories.*"), bundles.stdout());

        Commands.Result off = Commands.atrium(concat(new String[] {"feature", "disable", "memories"}, at));
        try {
            assertEquals(0, off.exit(), off.stderr());
            assertEquals("feature memories is disabled", off.lastLine());
        } finally {
            Commands.Result on = Commands.atrium(concat(new String[] {"feature", "enable", "memories"}, at));
            assertEquals(0, on.exit(), on.stderr());
            assertEquals("feature memories is enabled", on.lastLine());
        }
        Commands.Result unknown = Commands.atrium(concat(new String[] {"feature", "enable", "nothing"}, at));
        assertEquals(1, unknown.exit());
        assertTrue(unknown.stderr().contains("no feature named 'nothing'"), unknown.stderr());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
