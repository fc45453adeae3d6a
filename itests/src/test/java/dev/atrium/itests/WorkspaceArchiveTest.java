package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A workspace exported as an archive from one server and imported into another (its own database) comes back with the
 * same content under new ids; another user's export is 404; a bad archive is 400 and leaves no workspace behind.
 */
class WorkspaceArchiveTest {

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static final String SECRET = "sk_live_never_exported_42";

    static FakeModelServer fake;
    static AtriumServer source;
    static AtriumServer target;

    @BeforeAll
    static void start() throws Exception {
        fake = new FakeModelServer();
        // the source's agent runs ask a scripted model on loopback
        source = AtriumServer.launch(
                Files.createTempDirectory("atrium-archive-a-"),
                TestDatabase.create(),
                Map.of(
                        "ATRIUM_OPENAI_BASE_URL",
                        fake.openAiBase(),
                        "ATRIUM_OPENAI_API_KEY",
                        "sk-test-openai",
                        "ATRIUM_RUNS_POLL_MS",
                        "200"));
        target = AtriumServer.launch(Files.createTempDirectory("atrium-archive-b-"), TestDatabase.create());
    }

    @AfterAll
    static void stop() throws Throwable {
        try {
            if (source != null) {
                source.close();
            }
        } finally {
            try {
                if (target != null) {
                    target.close();
                }
            } finally {
                if (fake != null) {
                    fake.close();
                }
            }
        }
    }

    @Test
    void anExportedWorkspaceImportsIntoAnotherServerWithTheSameContent() throws Exception {
        User u = source.newUser();
        String space = u.http()
                .post("/api/spaces", Map.of("name", "Archive me", "description", "everything in it"))
                .get("space")
                .get("id")
                .asText();
        fill(u, space);
        Map<String, Object> before = content(u.http(), space);

        HttpResponse<byte[]> export = download(u.http(), "/api/spaces/" + space + "/export?format=zip");
        assertEquals(200, export.statusCode(), new String(export.body(), StandardCharsets.UTF_8));
        assertEquals(
                "application/zip",
                export.headers().firstValue("Content-Type").orElse("").split(";")[0]);
        Map<String, byte[]> entries = unzip(export.body());
        JsonNode manifest = Http.JSON.readTree(entries.get("manifest.json"));
        assertEquals("atrium-workspace-archive", manifest.path("format").asText());
        assertEquals("Archive me", manifest.path("space").path("name").asText());
        Map<String, Long> counts = new TreeMap<>();
        manifest.path("parts")
                .forEach(
                        p -> counts.put(p.path("name").asText(), p.path("count").asLong()));
        assertEquals(3L, counts.get("memories"), manifest.toString());
        assertEquals(2L, counts.get("threads"), manifest.toString());
        assertEquals(2L, counts.get("skills"), manifest.toString());
        assertEquals(2L, counts.get("reminders"), manifest.toString());
        assertEquals(1L, counts.get("shortcuts"), manifest.toString());
        assertEquals(5L, counts.get("storage"), manifest.toString());
        assertEquals(2L, counts.get("repos"), manifest.toString());
        assertEquals(2L, counts.get("resources"), manifest.toString());
        assertEquals(1L, counts.get("runs"), manifest.toString());
        for (byte[] entry : entries.values()) {
            assertFalse(
                    new String(entry, StandardCharsets.ISO_8859_1).contains(SECRET),
                    "a secret value is in the archive");
        }
        // the JSON answer stays the default
        assertEquals(
                space,
                u.http()
                        .get("/api/spaces/" + space + "/export")
                        .get("space")
                        .path("id")
                        .asText());

        User v = target.newUser();
        Http.Reply imported = v.http().send("POST", "/api/spaces/import", export.body(), "application/zip");
        assertEquals(201, imported.status(), imported.body());
        JsonNode made = imported.get("space");
        assertEquals("Archive me", made.path("name").asText());
        assertEquals("everything in it", made.path("description").asText());
        assertNotEquals(space, made.path("id").asText());
        assertEquals(0, imported.get("skipped").size(), imported.body());
        Map<String, Long> importedCounts = new TreeMap<>();
        imported.get("parts").forEach(p -> {
            importedCounts.put(p.path("name").asText(), p.path("count").asLong());
            assertEquals(counts.get(p.path("name").asText()), p.path("archived").asLong(), p.toString());
        });
        // a secretRef cannot be made without its value, which no archive holds: one resource of two comes back
        counts.put("resources", 1L);
        assertEquals(counts, importedCounts);

        assertEquals(before, content(v.http(), made.path("id").asText()));

        // the operator saw the import as a job, part by part, to its end
        JsonNode job = JobsApiTest.newest(target, "workspace-import", "Archive me");
        assertTrue(job != null, "the import is listed among the jobs");
        assertEquals("succeeded", job.path("state").asText(), job.toString());
        assertEquals(imported.get("parts").size(), job.path("total").asLong(), job.toString());
        assertEquals(job.path("total").asLong(), job.path("done").asLong(), job.toString());
        assertTrue(job.path("summary").asText().contains(made.path("id").asText()), job.toString());
        assertEquals("dev.atrium.kernel", job.path("bundle").asText(), job.toString());
    }

    @Test
    void aRunStillGoingWhenExportedComesBackCancelledAndIsNotStartedAgain() throws Exception {
        User u = source.newUser();
        String space = u.defaultSpaceId();
        String model = "archive-busy-" + space;
        assertEquals(
                200,
                u.http()
                        .patch("/api/spaces/" + space + "/model", Map.of("provider", "openai", "model", model))
                        .status());
        List<String> busy = new ArrayList<>(FakeModelServer.openAiText("Still ", "thinking"));
        busy.add(2, "SLEEP:6000");
        fake.script(model, body -> busy);
        String thread = u.http()
                .post("/api/spaces/" + space + "/threads", Map.of("title", "Busy"))
                .get("thread")
                .path("id")
                .asText();
        String run = u.http()
                .post("/api/threads/" + thread + "/runs", Map.of("input", "Take your time"))
                .get("run")
                .path("id")
                .asText();
        awaitStatus(u, run, "running");
        HttpResponse<byte[]> export = download(u.http(), "/api/spaces/" + space + "/export?format=zip");
        assertEquals(200, export.statusCode());

        User v = target.newUser();
        Http.Reply imported = v.http().send("POST", "/api/spaces/import", export.body(), "application/zip");
        assertEquals(201, imported.status(), imported.body());
        String made = imported.get("space").path("id").asText();
        JsonNode busyThread =
                v.http().get("/api/spaces/" + made + "/threads").get("threads").get(0);
        JsonNode runs = v.http()
                .get("/api/threads/" + busyThread.path("id").asText() + "/runs")
                .get("runs");
        assertEquals(1, runs.size(), runs.toString());
        JsonNode back = runs.get(0);
        assertEquals("cancelled", back.path("status").asText(), back.toString());
        assertEquals(
                "the run was in progress when its workspace was exported",
                back.path("error").asText());
        assertFalse(back.path("finished_at").isNull(), back.toString());
        JsonNode events = v.http()
                .get("/api/runs/" + back.path("id").asText() + "/events")
                .get("events");
        assertEquals("run.queued", events.get(0).path("type").asText(), events.toString());
        assertEquals("run.cancelled", events.get(events.size() - 1).path("type").asText(), events.toString());
        assertEquals(
                events.get(events.size() - 1).path("id").asLong(),
                v.http()
                        .get("/api/runs/" + back.path("id").asText() + "/events")
                        .get("last_event_id")
                        .asLong());
        // the source's run goes on to its end
        assertEquals(
                "completed", awaitStatus(u, run, "completed").path("status").asText());
    }

    @Test
    void anotherUsersWorkspaceExportsAsNotFound() {
        User owner = source.newUser();
        User other = source.newUser();
        Http.Reply r = other.http().get("/api/spaces/" + owner.defaultSpaceId() + "/export?format=zip");
        BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
        BadInputTest.assertSpecError(
                owner.http().get("/api/spaces/" + owner.defaultSpaceId() + "/export?format=tar"), 400, "BAD_REQUEST");
    }

    @Test
    void aCorruptArchiveIsBadRequestAndMakesNoWorkspace() throws Exception {
        User v = target.newUser();
        int spaces = v.http().get("/api/spaces").json().path("total").asInt();

        Http.Reply garbage =
                v.http().send("POST", "/api/spaces/import", "not a zip at all".getBytes(), "application/zip");
        BadInputTest.assertSpecError(garbage, 400, "BAD_REQUEST");

        Map<String, byte[]> noManifest = new LinkedHashMap<>();
        noManifest.put("memories/memories.jsonl", "{}\n".getBytes(StandardCharsets.UTF_8));
        BadInputTest.assertSpecError(
                v.http().send("POST", "/api/spaces/import", zip(noManifest), "application/zip"), 400, "BAD_REQUEST");

        // a good first part and a broken second one: the first one's rows go with the workspace
        Map<String, byte[]> broken = new LinkedHashMap<>();
        broken.put(
                "memories/memories.jsonl",
                "{\"content\":\"kept?\",\"created_at\":\"2026-01-01T00:00:00Z\"}\n".getBytes(StandardCharsets.UTF_8));
        broken.put(
                "threads/threads.jsonl", "{\"key\":\"t1\",\"title\":\"x\",\"created_at\":\"yesterday\"}\n".getBytes());
        broken.put("manifest.json", manifest("memories", "threads"));
        Http.Reply half = v.http().send("POST", "/api/spaces/import", zip(broken), "application/zip");
        BadInputTest.assertSpecError(half, 400, "BAD_REQUEST");
        assertTrue(half.body().contains("created_at"), half.body());
        JsonNode failedJob =
                target.operator().get("/admin/jobs?state=failed").get("jobs").get(0);
        assertEquals("workspace-import", failedJob.path("kind").asText(), failedJob.toString());
        assertTrue(failedJob.path("reason").asText().contains("created_at"), failedJob.toString());

        // a truncated archive (a real one cut short)
        User u = source.newUser();
        u.http().post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "x".repeat(5000)));
        byte[] whole = download(u.http(), "/api/spaces/" + u.defaultSpaceId() + "/export?format=zip")
                .body();
        byte[] cut = java.util.Arrays.copyOf(whole, whole.length / 2);
        BadInputTest.assertSpecError(
                v.http().send("POST", "/api/spaces/import", cut, "application/zip"), 400, "BAD_REQUEST");

        assertEquals(spaces, v.http().get("/api/spaces").json().path("total").asInt());
        assertFalse(memoriesAnywhere(v).contains("kept?"));
    }

    @Test
    void importedContentIsFoundByWorkspaceSearchThoughItsTimesAreOld() throws Exception {
        User v = target.newUser();
        // the server's search has indexed something of now, so its cursors are past the archived times
        String here = "/api/spaces/" + v.defaultSpaceId();
        assertEquals(
                201,
                v.http()
                        .post(here + "/memories", Map.of("content", "A lighthouse keeper logs the weather"))
                        .status());
        awaitFound(v, v.defaultSpaceId(), "lighthouse keeper");
        Map<String, byte[]> entries = new LinkedHashMap<>();
        entries.put(
                "memories/memories.jsonl",
                ("{\"content\":\"The orchard's quince trees flower in April\",\"created_at\":\"2025-03-01T00:00:00Z\","
                                + "\"updated_at\":\"2025-03-01T00:00:00Z\"}\n")
                        .getBytes(StandardCharsets.UTF_8));
        entries.put("manifest.json", manifest("memories"));
        Http.Reply r = v.http().send("POST", "/api/spaces/import?name=Orchard", zip(entries), "application/zip");
        assertEquals(201, r.status(), r.body());
        awaitFound(v, r.get("space").path("id").asText(), "quince trees");
    }

    /** Waits (30 s at most) until the workspace's search finds {@code words}. */
    private static void awaitFound(User u, String space, String words) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        Http.Reply last = null;
        while (System.nanoTime() < deadline) {
            last = u.http().post("/api/spaces/" + space + "/search", Map.of("query", words, "limit", 10));
            if (last.status() == 200) {
                for (JsonNode hit : last.json().path("results")) {
                    if (hit.path("snippet").asText().contains(words.split(" ")[0])) {
                        return;
                    }
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("workspace search did not find '" + words + "': "
                + (last == null ? "" : last.status() + " " + last.body()));
    }

    @Test
    void aPartThisServerDoesNotHaveIsSkippedAndSaidSo() throws Exception {
        User v = target.newUser();
        Map<String, byte[]> entries = new LinkedHashMap<>();
        entries.put(
                "memories/memories.jsonl",
                "{\"content\":\"from afar\",\"created_at\":\"2026-01-01T00:00:00Z\"}\n"
                        .getBytes(StandardCharsets.UTF_8));
        entries.put("telescopes/telescopes.jsonl", "{\"name\":\"hubble\"}\n".getBytes(StandardCharsets.UTF_8));
        entries.put("manifest.json", manifest("memories", "telescopes"));
        Http.Reply r = v.http().send("POST", "/api/spaces/import?name=Renamed", zip(entries), "application/zip");
        assertEquals(201, r.status(), r.body());
        assertEquals("Renamed", r.get("space").path("name").asText());
        assertEquals("telescopes", r.get("skipped").get(0).asText());
        String id = r.get("space").path("id").asText();
        JsonNode memories = v.http().get("/api/spaces/" + id + "/memories").get("memories");
        assertEquals(1, memories.size());
        assertEquals("from afar", memories.get(0).path("content").asText());
        assertEquals("2026-01-01T00:00:00Z", memories.get(0).path("created_at").asText());
    }

    /** Three memories, two threads (one archived) with messages of three roles, two skills (one disabled). */
    private static void fill(User u, String space) {
        String base = "/api/spaces/" + space;
        for (String m :
                List.of("Deploys happen on Tuesdays", "The staging key rotates monthly", "Ünïcode ✓ survives")) {
            assertEquals(
                    201, u.http().post(base + "/memories", Map.of("content", m)).status());
        }
        String plan = u.http()
                .post(base + "/threads", Map.of("title", "Release planning"))
                .get("thread")
                .path("id")
                .asText();
        u.http().post("/api/threads/" + plan + "/messages", Map.of("role", "system", "content", "Be brief."));
        u.http().post("/api/threads/" + plan + "/messages", Map.of("content", "When do we ship?"));
        u.http().post("/api/threads/" + plan + "/messages", Map.of("role", "assistant", "content", "On Tuesday."));
        String model = "archive-" + space;
        assertEquals(
                200,
                u.http()
                        .patch(base + "/model", Map.of("provider", "openai", "model", model))
                        .status());
        List<String> slow = new ArrayList<>(FakeModelServer.openAiText("Ship ", "on Tuesday."));
        slow.add(2, "SLEEP:1500");
        fake.script(model, body -> slow);
        String run = u.http()
                .post("/api/threads/" + plan + "/runs", Map.of("input", "Summarise the plan"))
                .get("run")
                .path("id")
                .asText();
        awaitStatus(u, run, "running");
        Http.Reply artifact = u.http()
                .post(
                        "/api/runs/" + run + "/artifacts",
                        Map.of("name", "plan.md", "content_type", "text/markdown", "content", "# Plan\nShip ✓"));
        assertEquals(201, artifact.status(), artifact.body());
        awaitStatus(u, run, "completed");
        String old = u.http()
                .post(base + "/threads", Map.of("title", "Old questions"))
                .get("thread")
                .path("id")
                .asText();
        u.http().post("/api/threads/" + old + "/messages", Map.of("content", "Anything left?"));
        assertEquals(
                200, u.http().post("/api/threads/" + old + "/archive", Map.of()).status());

        Map<String, Object> tone = new LinkedHashMap<>();
        tone.put("name", "tone");
        tone.put("description", "When to answer briefly");
        tone.put("instructions", "Answer briefly.");
        tone.put("tools", List.of("http_fetch"));
        assertEquals(201, u.http().post(base + "/skills", tone).status());
        Map<String, Object> quiet = new LinkedHashMap<>();
        quiet.put("name", "quiet");
        quiet.put("description", "Say little");
        quiet.put("instructions", "Say as little as you can.");
        quiet.put("enabled", false);
        assertEquals(201, u.http().post(base + "/skills", quiet).status());

        Map<String, Object> daily = new LinkedHashMap<>();
        daily.put("title", "Standup");
        daily.put("rrule", "FREQ=DAILY");
        daily.put("starts_at", "2026-01-05T09:00");
        daily.put("time_zone", "Europe/Paris");
        assertEquals(201, u.http().post(base + "/reminders", daily).status());
        Map<String, Object> once = new LinkedHashMap<>();
        once.put("title", "Ship it");
        once.put("body", "The release is due");
        once.put("at", "2030-01-01T10:00:00Z");
        once.put("enabled", false);
        assertEquals(201, u.http().post(base + "/reminders", once).status());

        Map<String, Object> group = new LinkedHashMap<>();
        group.put("name", "Docs");
        group.put(
                "items",
                List.of(
                        Map.of("title", "Spec", "url", "https://example.com/spec", "icon", "book"),
                        Map.of("title", "Threads", "url", "/threads")));
        Http.Reply g = u.http().post(base + "/shortcuts/groups", group);
        assertEquals(201, g.status(), g.body());

        assertEquals(
                201,
                u.http()
                        .post(base + "/storage/folders", Map.of("path", "empty"))
                        .status());
        for (Map<String, Object> f : List.<Map<String, Object>>of(
                Map.of("path", "docs/readme.txt", "content", "hello from the archive"),
                Map.of("path", "docs/data.json", "content", "{\"a\":1}", "content_type", "application/json"),
                Map.of("path", "notes.md", "content", "# Ünïcode ✓"))) {
            Http.Reply r = u.http().post(base + "/storage/files", f);
            assertEquals(201, r.status(), r.body());
        }

        Http.Reply kv = u.http().post("/api/resources", Map.of("name", "cache", "type", "kv", "space_id", space));
        assertEquals(201, kv.status(), kv.body());
        Http.Reply secret = u.http()
                .post(
                        "/api/resources",
                        Map.of(
                                "name",
                                "api-key",
                                "type",
                                "secretRef",
                                "space_id",
                                space,
                                "config",
                                Map.of("value", SECRET)));
        assertEquals(201, secret.status(), secret.body());

        Http.Reply site = u.http()
                .post(base + "/repos", Map.of("name", "site", "description", "the site", "visibility", "public"));
        assertEquals(201, site.status(), site.body());
        String repo = site.get("repository").path("id").asText();
        String first = ReposApiTest.sha(ReposApiTest.commit(
                u, repo, "main", "0".repeat(40), "first", List.of(ReposApiTest.file("index.html", "<h1>hi</h1>"))));
        String second = ReposApiTest.sha(ReposApiTest.commit(
                u, repo, "main", first, "second", List.of(ReposApiTest.file("about.html", "<p>about</p>"))));
        assertEquals(
                201,
                u.http()
                        .post("/api/repos/" + repo + "/branches", Map.of("name", "feature"))
                        .status());
        ReposApiTest.sha(ReposApiTest.commit(
                u, repo, "feature", second, "on a branch", List.of(ReposApiTest.file("wip.txt", "wip"))));
        assertEquals(
                201,
                u.http()
                        .post(base + "/repos", Map.of("name", "empty-one", "default_branch", "trunk"))
                        .status());
    }

    private static JsonNode awaitStatus(User u, String run, String status) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        JsonNode r = null;
        while (System.nanoTime() < deadline) {
            r = u.http().get("/api/runs/" + run).get("run");
            if (r.path("status").asText().equals(status)) {
                return r;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new AssertionError("run " + run + " is not " + status + ": " + r);
    }

    /** A thread's runs with their events and artifacts, without ids (an event's artifact is named by its name). */
    private static List<String> runs(Http http, String thread) {
        List<String> runs = new ArrayList<>();
        http.get("/api/threads/" + thread + "/runs").get("runs").forEach(r -> {
            StringBuilder line = new StringBuilder();
            for (String f :
                    List.of("status", "provider", "model", "error", "created_at", "started_at", "finished_at")) {
                line.append(f).append('=').append(r.path(f)).append(' ');
            }
            String id = r.path("id").asText();
            http.get("/api/runs/" + id + "/events").get("events").forEach(e -> {
                line.append("| ")
                        .append(e.path("id"))
                        .append(' ')
                        .append(e.path("type").asText())
                        .append(' ')
                        .append(e.path("created_at").asText())
                        .append(' ');
                if (e.path("data").has("artifact_id")) {
                    JsonNode a = http.get("/api/artifacts/"
                                    + e.path("data").path("artifact_id").asText())
                            .get("artifact");
                    line.append("artifact ").append(a.path("name").asText()).append(' ');
                } else {
                    line.append(e.path("data"));
                }
            });
            http.get("/api/runs/" + id + "/artifacts").get("artifacts").forEach(a -> {
                JsonNode whole =
                        http.get("/api/artifacts/" + a.path("id").asText()).get("artifact");
                line.append(" | artifact ")
                        .append(whole.path("name").asText())
                        .append(' ')
                        .append(whole.path("content_type").asText())
                        .append(' ')
                        .append(whole.path("content").asText())
                        .append(' ')
                        .append(whole.path("created_at").asText());
            });
            runs.add(line.toString());
        });
        return runs;
    }

    /** What a workspace holds, without ids: the comparison of a round trip. */
    private static Map<String, Object> content(Http http, String space) {
        String base = "/api/spaces/" + space;
        Map<String, Object> c = new LinkedHashMap<>();
        List<String> memories = new ArrayList<>();
        http.get(base + "/memories?limit=100")
                .get("memories")
                .forEach(m -> memories.add(
                        m.path("content").asText() + " @" + m.path("created_at").asText()));
        c.put("memories", memories);
        List<String> threads = new ArrayList<>();
        http.get(base + "/threads?limit=100").get("threads").forEach(t -> {
            StringBuilder s = new StringBuilder(t.path("title").asText())
                    .append(" [")
                    .append(t.path("status").asText())
                    .append("] @")
                    .append(t.path("created_at").asText());
            http.get("/api/threads/" + t.path("id").asText() + "/messages?limit=100")
                    .get("messages")
                    .forEach(m -> s.append(" | ")
                            .append(m.path("role").asText())
                            .append(": ")
                            .append(m.path("content").asText())
                            .append(" @")
                            .append(m.path("created_at").asText()));
            runs(http, t.path("id").asText())
                    .forEach(run -> s.append(" || run ").append(run));
            threads.add(s.toString());
        });
        c.put("threads", threads);
        List<String> skills = new ArrayList<>();
        http.get(base + "/skills?limit=100").get("skills").forEach(s -> {
            if (!s.path("official").asBoolean()) {
                skills.add(s.path("name").asText() + " " + s.path("description").asText() + " "
                        + s.path("instructions").asText() + " " + s.path("tools") + " "
                        + s.path("enabled").asBoolean());
            }
        });
        c.put("skills", skills);
        List<String> reminders = new ArrayList<>();
        http.get(base + "/reminders?limit=100").get("reminders").forEach(r -> {
            StringBuilder line = new StringBuilder();
            for (String f :
                    List.of("title", "body", "time_zone", "at", "rrule", "starts_at", "enabled", "next_fire_at")) {
                line.append(f).append('=').append(r.path(f)).append(' ');
            }
            reminders.add(line.toString());
        });
        c.put("reminders", reminders);
        List<String> groups = new ArrayList<>();
        http.get(base + "/shortcuts/groups").get("groups").forEach(gr -> {
            StringBuilder line = new StringBuilder(gr.path("name").asText());
            gr.path("items")
                    .forEach(i -> line.append(" | ")
                            .append(i.path("title").asText())
                            .append(' ')
                            .append(i.path("url").asText())
                            .append(' ')
                            .append(i.path("icon")));
            groups.add(line.toString());
        });
        c.put("shortcuts", groups);
        List<String> files = new ArrayList<>();
        for (String folder : List.of("", "docs", "empty")) {
            http.get(base + "/storage?limit=100&sort=name&path=" + folder)
                    .get("files")
                    .forEach(f -> {
                        String line =
                                f.path("path").asText() + " " + f.path("kind").asText() + " " + f.path("size") + " "
                                        + f.path("content_type").asText();
                        if (f.path("kind").asText().equals("file")) {
                            line += " "
                                    + http.get(base + "/storage/" + f.path("id").asText() + "/content")
                                            .body();
                        }
                        files.add(line);
                    });
        }
        c.put("storage", files);
        List<String> repos = new ArrayList<>();
        http.get(base + "/repos").get("repositories").forEach(r -> {
            JsonNode full = http.get("/api/repos/" + r.path("id").asText()).get("repository");
            StringBuilder line = new StringBuilder(r.path("name").asText())
                    .append(' ')
                    .append(full.path("description").asText())
                    .append(' ')
                    .append(full.path("visibility").asText())
                    .append(' ')
                    .append(r.path("default_branch").asText());
            http.get("/api/repos/" + r.path("id").asText() + "/branches")
                    .get("branches")
                    .forEach(b -> line.append(" | ")
                            .append(b.path("name").asText())
                            .append('=')
                            .append(b.path("commit").asText()));
            repos.add(line.toString());
        });
        repos.sort(null);
        c.put("repos", repos);
        List<String> resources = new ArrayList<>();
        http.get("/api/resources?limit=100&space_id=" + space).get("resources").forEach(r -> {
            if (!r.path("type").asText().equals("secretRef")) {
                resources.add(r.path("name").asText() + " " + r.path("type").asText() + " "
                        + r.path("backend").asText() + " " + r.path("config"));
            }
        });
        c.put("resources", resources);
        assertEquals(1, resources.size(), c.toString());
        assertEquals(2, repos.size(), c.toString());
        assertTrue(repos.get(1).contains("| feature="), c.toString());
        assertEquals(2, reminders.size(), c.toString());
        assertEquals(1, groups.size(), c.toString());
        assertEquals(5, files.size(), c.toString());
        assertEquals(3, memories.size(), c.toString());
        assertEquals(2, threads.size(), c.toString());
        assertTrue(
                threads.stream()
                        .anyMatch(t -> t.contains("|| run status=\"completed\"")
                                && t.contains("artifact plan.md text/markdown")
                                && t.contains("artifact.created")
                                && t.contains("assistant: Ship on Tuesday.")),
                threads.toString());
        assertEquals(2, skills.size(), c.toString());
        return c;
    }

    private static List<String> memoriesAnywhere(User v) {
        List<String> all = new ArrayList<>();
        v.http()
                .get("/api/spaces")
                .get("spaces")
                .forEach(s -> v.http()
                        .get("/api/spaces/" + s.path("id").asText() + "/memories")
                        .get("memories")
                        .forEach(m -> all.add(m.path("content").asText())));
        return all;
    }

    private static byte[] manifest(String... parts) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("format", "atrium-workspace-archive");
        m.put("version", 1);
        m.put("space", Map.of("name", "Handmade"));
        List<Map<String, Object>> list = new ArrayList<>();
        for (String p : parts) {
            list.add(Map.of("name", p, "count", 1));
        }
        m.put("parts", list);
        return Http.JSON.writeValueAsBytes(m);
    }

    private static byte[] zip(Map<String, byte[]> entries) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                zip.putNextEntry(new ZipEntry(e.getKey()));
                zip.write(e.getValue());
                zip.closeEntry();
            }
        }
        return bytes.toByteArray();
    }

    private static Map<String, byte[]> unzip(byte[] archive) throws IOException {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(archive))) {
            for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
                entries.put(e.getName(), in.readAllBytes());
            }
        }
        return entries;
    }

    private static HttpResponse<byte[]> download(Http http, String path) throws Exception {
        return CLIENT.send(
                HttpRequest.newBuilder(URI.create(http.base() + path))
                        .header("Authorization", "Bearer " + http.token())
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }
}
