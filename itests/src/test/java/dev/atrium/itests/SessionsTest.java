package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * File-sync sessions (issue 39): a branch checked out into a work tree on the server, edited file by file, committed as
 * exactly one commit on stop (seen by the repos API and by a real {@code git clone}); idle sessions expire and lose
 * their work trees; a stop over a branch that changed the same file is 409 and loses nothing, disjoint edits both land;
 * a stranger gets the 404 of a missing session everywhere.
 */
@SharedServer
class SessionsTest {

    private static final String ZERO = "0".repeat(40);

    @TempDir
    Path tmp;

    static String session(Http.Reply started) {
        assertEquals(201, started.status(), started.body());
        return started.get("session").get("id").asText();
    }

    static Http.Reply start(User u, String repo, Map<String, Object> extra) {
        Map<String, Object> body = new HashMap<>(extra);
        body.put("repo", repo);
        return u.http().post("/api/spaces/" + u.defaultSpaceId() + "/sessions", body);
    }

    static Http.Reply put(User u, String session, String path, String content) {
        return u.http()
                .send(
                        "PUT",
                        "/api/sessions/" + session + "/files/" + path,
                        content.getBytes(StandardCharsets.UTF_8),
                        "application/octet-stream");
    }

    static Http.Reply stop(User u, String session, String message) {
        return u.http().post("/api/sessions/" + session + "/stop", Map.of("message", message));
    }

    static String head(User u, String repoId) {
        return u.http()
                .get("/api/repos/" + repoId + "/commits?limit=1")
                .get("commits")
                .get(0)
                .get("sha")
                .asText();
    }

    static String raw(User u, String repoId, String path) {
        Http.Reply r = u.http().get("/api/repos/" + repoId + "/blob/main/" + path + "?format=raw");
        assertEquals(200, r.status(), r.body());
        return r.body();
    }

    /** A repository with {@code a.txt}, {@code b.txt} and {@code docs/c.txt} on main; answers its id. */
    static String repoWithFiles(User u, String name) {
        String id = ReposApiTest.create(u, name);
        ReposApiTest.sha(ReposApiTest.commit(
                u,
                id,
                "main",
                ZERO,
                "first",
                List.of(
                        ReposApiTest.file("a.txt", "alpha\n"),
                        ReposApiTest.file("b.txt", "beta\n"),
                        ReposApiTest.file("docs/c.txt", "gamma\n"))));
        return id;
    }

    @Test
    void aStopMakesExactlyOneCommitOfEveryEditSeenByTheReposApiAndAGitClone(AtriumServer server) throws Exception {
        User u = server.newUser();
        String repoId = repoWithFiles(u, "synced");
        String base = head(u, repoId);
        Http.Reply started = start(u, "synced", Map.of());
        String id = session(started);
        JsonNode view = started.get("session");
        assertEquals("active", view.get("state").asText());
        assertEquals("main", view.get("branch").asText());
        assertEquals(base, view.get("base").asText());
        assertEquals(repoId, view.get("repo_id").asText());
        JsonNode listed = u.http()
                .get("/api/spaces/" + u.defaultSpaceId() + "/sessions?state=active")
                .json();
        assertEquals(1, listed.get("total").asInt(), listed.toString());
        assertEquals(id, listed.get("sessions").get(0).get("id").asText());
        assertEquals(
                400,
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/sessions?state=bogus")
                        .status());
        Path tree = server.data.resolve("sessions").resolve(id).resolve("tree");
        assertEquals("alpha\n", Files.readString(tree.resolve("a.txt")), "the branch is checked out on the server");

        Http.Reply files = u.http().get("/api/sessions/" + id + "/files");
        assertEquals(200, files.status(), files.body());
        assertEquals(3, files.get("total").asInt());
        assertEquals("a.txt", files.get("files").get(0).get("path").asText());
        assertEquals(6, files.get("files").get(0).get("size").asInt());
        Http.Reply read = u.http().get("/api/sessions/" + id + "/files/docs/c.txt");
        assertEquals(200, read.status(), read.body());
        assertEquals("gamma\n", read.body());

        assertEquals(200, put(u, id, "a.txt", "alpha two\n").status());
        Http.Reply added = put(u, id, "src/new.txt", "brand new\n");
        assertEquals(201, added.status(), added.body());
        assertTrue(added.get("created").asBoolean());
        assertEquals(
                200, u.http().delete("/api/sessions/" + id + "/files/b.txt").status());
        assertEquals(
                404, u.http().delete("/api/sessions/" + id + "/files/b.txt").status());
        assertEquals(404, u.http().get("/api/sessions/" + id + "/files/b.txt").status());

        JsonNode health = u.http().get("/api/sessions/" + id + "/health").json();
        assertEquals("active", health.get("state").asText());
        assertEquals(base, health.get("base").asText());
        assertEquals(1, health.get("changes").get("added").asInt(), health.toString());
        assertEquals(1, health.get("changes").get("modified").asInt(), health.toString());
        assertEquals(1, health.get("changes").get("deleted").asInt(), health.toString());
        assertEquals(base, head(u, repoId), "nothing is committed before the stop");

        Http.Reply stopped = stop(u, id, "edits from a session");
        assertEquals(200, stopped.status(), stopped.body());
        assertTrue(stopped.get("committed").asBoolean());
        String commit = stopped.get("commit").get("sha").asText();
        assertEquals("stopped", stopped.get("session").get("state").asText());
        assertEquals(commit, stopped.get("session").get("commit").asText());

        JsonNode commits =
                u.http().get("/api/repos/" + repoId + "/commits").json().get("commits");
        assertEquals(2, commits.size(), "exactly one commit more");
        assertEquals(commit, commits.get(0).get("sha").asText());
        assertEquals(
                base,
                commits.get(0).get("parents").get(0).asText(),
                commits.get(0).toString());
        assertEquals("alpha two\n", raw(u, repoId, "a.txt"));
        assertEquals("brand new\n", raw(u, repoId, "src/new.txt"));
        assertEquals(
                404, u.http().get("/api/repos/" + repoId + "/blob/main/b.txt").status());
        assertFalse(Files.exists(tree), "a stopped session keeps no work tree: its commit has the files");

        String clone = u.http()
                .get("/api/repos/" + repoId)
                .get("repository")
                .get("clone_url")
                .asText();
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        git.ok(tmp, "clone", "-q", clone, "cloned");
        Path cloned = tmp.resolve("cloned");
        assertEquals(commit, git.ok(cloned, "rev-parse", "HEAD").trim());
        assertEquals("alpha two\n", Files.readString(cloned.resolve("a.txt")));
        assertEquals("brand new\n", Files.readString(cloned.resolve("src/new.txt")));
        assertFalse(Files.exists(cloned.resolve("b.txt")));
        assertEquals(
                "edits from a session",
                git.ok(cloned, "log", "-1", "--format=%s").trim());

        // a stop with nothing to commit makes no commit
        Http.Reply resumed = u.http().post("/api/sessions/" + id + "/resume", Map.of());
        assertEquals(200, resumed.status(), resumed.body());
        assertEquals("active", resumed.get("session").get("state").asText());
        assertEquals(commit, resumed.get("session").get("base").asText());
        assertEquals("brand new\n", Files.readString(tree.resolve("src/new.txt")), "checked out again");
        Http.Reply idle = stop(u, id, "nothing");
        assertEquals(200, idle.status(), idle.body());
        assertFalse(idle.get("committed").asBoolean());
        assertTrue(idle.get("commit").isNull());
        assertEquals(commit, head(u, repoId));
    }

    @Test
    void aStopIsAPushForActions(AtriumServer server) throws Exception {
        User u = server.newUser();
        String repoId = ReposApiTest.create(u, "ci");
        ReposApiTest.sha(ReposApiTest.commit(
                u,
                repoId,
                "main",
                ZERO,
                "add ci",
                List.of(ReposApiTest.file(
                        ".github/workflows/ci.yml",
                        "name: ci\non: push\njobs:\n  build:\n    runs-on: busybox\n    steps:\n"
                                + "      - run: echo built\n"))));
        String id = session(start(u, "ci", Map.of()));
        assertEquals(201, put(u, id, "src/app.txt", "v1\n").status());
        Http.Reply stopped = stop(u, id, "change the app");
        assertEquals(200, stopped.status(), stopped.body());
        String commit = stopped.get("commit").get("sha").asText();
        JsonNode run = ActionsTest.awaitRun(
                u, repoId, r -> r.get("head_sha").asText().equals(commit), java.time.Duration.ofSeconds(30));
        assertEquals("push", run.get("event").asText(), "the session's commit runs the push workflows");
    }

    @Test
    void stoppingTheBundleLeavesActiveWorkTreesAndTheSessionsGoOnAfterItsStart(AtriumServer server) throws Exception {
        User u = server.newUser();
        String repoId = repoWithFiles(u, "restarted");
        String id = session(start(u, "restarted", Map.of()));
        assertEquals(201, put(u, id, "kept.txt", "kept across a stop\n").status());
        Path tree = server.data.resolve("sessions").resolve(id).resolve("tree");
        String health = "/api/sessions/" + id + "/health";
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/sessions/disable", Map.of())
                            .status());
            assertEquals(404, FeatureSwitchTest.await(u.http(), health, 404).status());
            assertEquals("kept across a stop\n", Files.readString(tree.resolve("kept.txt")));
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/sessions/enable", Map.of())
                            .status());
        }
        JsonNode after = FeatureSwitchTest.await(u.http(), health, 200).json();
        assertEquals("active", after.get("state").asText(), after.toString());
        assertEquals(1, after.get("changes").get("added").asInt(), after.toString());
        Http.Reply stopped = stop(u, id, "after a restart");
        assertEquals(200, stopped.status(), stopped.body());
        assertEquals("kept across a stop\n", raw(u, repoId, "kept.txt"));
    }

    @Test
    void badInputIsA4xxThatSaysWhatWasWrong(AtriumServer server) {
        User u = server.newUser();
        repoWithFiles(u, "strict");
        assertEquals(404, start(u, "nosuchrepo", Map.of()).status());
        assertEquals(404, start(u, "strict", Map.of("branch", "nosuchbranch")).status());
        assertEquals(400, start(u, "strict", Map.of("branch", "../x")).status());
        assertEquals(400, start(u, "strict", Map.of("idle_timeout_s", 0)).status());
        assertEquals(400, start(u, "strict", Map.of("idle_timeout_s", "soon")).status());
        assertEquals(400, start(u, "strict", Map.of("colour", "blue")).status());
        String id = session(start(u, "strict", Map.of()));
        for (String bad : List.of(".git/config", "a/../b.txt", "x/.GIT/hooks", "x//y")) {
            Http.Reply r = put(u, id, bad, "nope");
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertEquals("BAD_REQUEST", r.errorCode());
        }
        assertEquals(400, put(u, id, "docs", "a directory").status());
        assertEquals(400, put(u, id, "a.txt/inside", "under a file").status());
        Http.Reply noMessage = u.http().post("/api/sessions/" + id + "/stop", Map.of());
        assertEquals(400, noMessage.status(), noMessage.body());
        assertEquals(
                400,
                u.http()
                        .post(
                                "/api/sessions/" + id + "/stop",
                                Map.of("message", "m", "author", Map.of("name", "<x>", "email", "a@b")))
                        .status());
        assertEquals(
                404, u.http().get("/api/sessions/ses_nosuchsession00000/health").status());
        assertEquals(404, u.http().get("/api/sessions/garbage/health").status());
    }

    @Test
    void anIdleSessionExpiresAndItsWorkTreeIsRemoved(AtriumServer server) throws Exception {
        User u = server.newUser();
        repoWithFiles(u, "idle");
        String id = session(start(u, "idle", Map.of("idle_timeout_s", 2)));
        Path dir = server.data.resolve("sessions").resolve(id);
        assertTrue(Files.isDirectory(dir.resolve("tree")));
        assertEquals(201, put(u, id, "lost.txt", "never committed").status());
        long deadline = System.currentTimeMillis() + 30_000;
        while (Files.exists(dir) && System.currentTimeMillis() < deadline) {
            Thread.sleep(200);
        }
        assertFalse(Files.exists(dir), "the reaper removed the work tree");
        JsonNode health = u.http().get("/api/sessions/" + id + "/health").json();
        assertEquals("expired", health.get("state").asText(), health.toString());
        assertFalse(health.get("work_tree").asBoolean());
        Http.Reply late = put(u, id, "late.txt", "x");
        assertEquals(409, late.status(), late.body());
        assertEquals(
                409,
                u.http().post("/api/sessions/" + id + "/heartbeat", Map.of()).status());
        assertEquals(
                409, u.http().post("/api/sessions/" + id + "/resume", Map.of()).status());
    }

    @Test
    void aHeartbeatKeepsASessionAlive(AtriumServer server) throws Exception {
        User u = server.newUser();
        repoWithFiles(u, "beating");
        String id = session(start(u, "beating", Map.of("idle_timeout_s", 3)));
        String before = u.http()
                .get("/api/sessions/" + id + "/health")
                .get("expires_at")
                .asText();
        for (int i = 0; i < 5; i++) {
            Thread.sleep(1000);
            Http.Reply beat = u.http().post("/api/sessions/" + id + "/heartbeat", Map.of());
            assertEquals(200, beat.status(), beat.body());
            assertEquals("active", beat.get("session").get("state").asText());
        }
        JsonNode health = u.http().get("/api/sessions/" + id + "/health").json();
        assertEquals("active", health.get("state").asText());
        assertNotEquals(before, health.get("expires_at").asText());
        assertTrue(health.get("work_tree").asBoolean());
    }

    @Test
    void twoSessionsOnOneFileConflictAndLoseNothingWhileDisjointEditsBothLand(AtriumServer server) {
        User u = server.newUser();
        String repoId = repoWithFiles(u, "shared");
        String first = session(start(u, "shared", Map.of()));
        String second = session(start(u, "shared", Map.of()));
        String third = session(start(u, "shared", Map.of()));
        assertEquals(200, put(u, first, "a.txt", "from the first\n").status());
        assertEquals(200, put(u, second, "a.txt", "from the second\n").status());
        assertEquals(200, put(u, third, "docs/c.txt", "from the third\n").status());

        Http.Reply one = stop(u, first, "first");
        assertEquals(200, one.status(), one.body());
        String c1 = one.get("commit").get("sha").asText();

        Http.Reply clash = stop(u, second, "second");
        assertEquals(409, clash.status(), clash.body());
        assertEquals("CONFLICT", clash.errorCode());
        assertTrue(clash.json().get("error").get("message").asText().contains("a.txt"), clash.body());
        assertEquals(c1, head(u, repoId), "nothing was committed");
        JsonNode health = u.http().get("/api/sessions/" + second + "/health").json();
        assertEquals("active", health.get("state").asText());
        assertEquals(1, health.get("changes").get("modified").asInt(), health.toString());
        assertEquals(c1, health.get("head").asText());
        assertEquals(
                "from the second\n",
                u.http().get("/api/sessions/" + second + "/files/a.txt").body(),
                "the session keeps its changes");

        // disjoint: the third session's commit goes on top of the first's
        Http.Reply three = stop(u, third, "third");
        assertEquals(200, three.status(), three.body());
        String c3 = three.get("commit").get("sha").asText();
        assertEquals(c3, head(u, repoId));
        assertEquals("from the first\n", raw(u, repoId, "a.txt"));
        assertEquals("from the third\n", raw(u, repoId, "docs/c.txt"));
        JsonNode top = u.http()
                .get("/api/repos/" + repoId + "/commits?limit=1")
                .get("commits")
                .get(0);
        assertEquals(c1, top.get("parents").get(0).asText(), "rebased onto the branch's new head");

        // the conflicting session moves onto the head, keeping its own a.txt, and then commits
        Http.Reply resumed = u.http().post("/api/sessions/" + second + "/resume", Map.of());
        assertEquals(200, resumed.status(), resumed.body());
        assertEquals(c3, resumed.get("session").get("base").asText());
        assertEquals(List.of("a.txt"), List.of(resumed.get("kept").get(0).asText()));
        assertEquals(
                "from the second\n",
                u.http().get("/api/sessions/" + second + "/files/a.txt").body());
        assertEquals(
                "from the third\n",
                u.http().get("/api/sessions/" + second + "/files/docs/c.txt").body(),
                "the other files are the head's");
        assertEquals(
                200, put(u, second, "a.txt", "from the first and the second\n").status());
        Http.Reply two = stop(u, second, "second, merged by hand");
        assertEquals(200, two.status(), two.body());
        assertEquals("from the first and the second\n", raw(u, repoId, "a.txt"));
        assertEquals("from the third\n", raw(u, repoId, "docs/c.txt"));
    }

    @Test
    void aResumeWhoseFileWouldTakeThePlaceOfTheBranchsNewDirectoryIsRefusedAndLosesNothing(AtriumServer server) {
        User u = server.newUser();
        String repoId = repoWithFiles(u, "shapes");
        String file = session(start(u, "shapes", Map.of()));
        String directory = session(start(u, "shapes", Map.of()));
        assertEquals(201, put(u, file, "notes", "a file\n").status());
        assertEquals(201, put(u, directory, "notes/x.txt", "in a directory\n").status());
        assertEquals(200, stop(u, directory, "a directory").status());

        assertEquals(409, stop(u, file, "a file").status());
        Http.Reply resumed = u.http().post("/api/sessions/" + file + "/resume", Map.of());
        assertEquals(409, resumed.status(), resumed.body());
        assertEquals("CONFLICT", resumed.errorCode());
        assertTrue(resumed.body().contains("notes"), resumed.body());
        assertEquals(
                "a file\n",
                u.http().get("/api/sessions/" + file + "/files/notes").body(),
                "the session keeps its file");
        assertEquals(409, stop(u, file, "a file, again").status(), "still in conflict, not rebased");
        assertEquals("in a directory\n", raw(u, repoId, "notes/x.txt"), "the branch keeps its directory");

        // the other way round: the session's directory where the branch now has a file
        String inside = session(start(u, "shapes", Map.of()));
        String plain = session(start(u, "shapes", Map.of()));
        assertEquals(201, put(u, inside, "tools/run.sh", "echo run\n").status());
        assertEquals(201, put(u, plain, "tools", "a plain file\n").status());
        assertEquals(200, stop(u, plain, "a plain file").status());
        Http.Reply again = u.http().post("/api/sessions/" + inside + "/resume", Map.of());
        assertEquals(409, again.status(), again.body());
        assertTrue(again.body().contains("tools/run.sh"), again.body());
        assertEquals("a plain file\n", raw(u, repoId, "tools"));
    }

    @Test
    void aPrincipalHasAtMostTenActiveSessions(AtriumServer server) {
        User u = server.newUser();
        repoWithFiles(u, "many");
        List<String> started = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            started.add(session(start(u, "many", Map.of())));
        }
        Http.Reply eleventh = start(u, "many", Map.of());
        assertEquals(429, eleventh.status(), eleventh.body());
        assertEquals("RATE_LIMITED", eleventh.errorCode());
        assertEquals(
                200,
                u.http()
                        .post("/api/sessions/" + started.get(0) + "/discard", Map.of())
                        .status());
        session(start(u, "many", Map.of()));
        User other = server.newUser();
        repoWithFiles(other, "many");
        session(start(other, "many", Map.of())); // the bound is each Principal's own
    }

    @Test
    void discardDropsTheChangesAndEndsTheSession(AtriumServer server) throws Exception {
        User u = server.newUser();
        String repoId = repoWithFiles(u, "dropped");
        String base = head(u, repoId);
        String id = session(start(u, "dropped", Map.of()));
        assertEquals(201, put(u, id, "scratch.txt", "throwaway").status());
        Http.Reply discarded = u.http().post("/api/sessions/" + id + "/discard", Map.of());
        assertEquals(200, discarded.status(), discarded.body());
        assertEquals("discarded", discarded.get("session").get("state").asText());
        assertFalse(Files.exists(server.data.resolve("sessions").resolve(id)));
        assertEquals(base, head(u, repoId));
        assertEquals(
                404,
                u.http().get("/api/repos/" + repoId + "/blob/main/scratch.txt").status());
        assertEquals(409, stop(u, id, "too late").status());
        assertEquals(
                409, u.http().post("/api/sessions/" + id + "/discard", Map.of()).status());
        assertEquals(
                "discarded",
                u.http().get("/api/sessions/" + id + "/health").get("state").asText());
    }

    @Test
    void aMergesOnlyBranchIsNotCommittedTo(AtriumServer server) {
        User u = server.newUser();
        String repoId = repoWithFiles(u, "guarded");
        String id = session(start(u, "guarded", Map.of()));
        assertEquals(200, put(u, id, "a.txt", "sneaky\n").status());
        Http.Reply set = u.http().patch("/api/repos/" + repoId, Map.of("merges_only", true));
        assertEquals(200, set.status(), set.body());
        Http.Reply refused = stop(u, id, "sneak");
        assertEquals(409, refused.status(), refused.body());
        assertEquals("alpha\n", raw(u, repoId, "a.txt"));
        assertEquals(409, start(u, "guarded", Map.of()).status(), "no new session on it either");
    }

    @Test
    void aStrangerGetsTheNotFoundOfAMissingSessionOnEveryRoute(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String repoId = repoWithFiles(owner, "private");
        String id = session(start(owner, "private", Map.of()));
        String missing = "ses_" + "x".repeat(20);
        assertEquals(
                404,
                stranger.http()
                        .post("/api/spaces/" + owner.defaultSpaceId() + "/sessions", Map.of("repo", "private"))
                        .status());
        assertEquals(404, start(stranger, repoId, Map.of()).status(), "another's repository id is not found");
        for (String target : List.of(id, missing)) {
            String base = "/api/sessions/" + target;
            List<Http.Reply> replies = List.of(
                    stranger.http().get(base + "/health"),
                    stranger.http().get(base + "/files"),
                    stranger.http().get(base + "/files/a.txt"),
                    put(stranger, target, "a.txt", "mine now"),
                    stranger.http().delete(base + "/files/a.txt"),
                    stranger.http().post(base + "/heartbeat", Map.of()),
                    stranger.http().post(base + "/stop", Map.of("message", "m")),
                    stranger.http().post(base + "/resume", Map.of()),
                    stranger.http().post(base + "/discard", Map.of()));
            for (Http.Reply r : replies) {
                assertEquals(404, r.status(), r.body());
                assertEquals(
                        "session not found",
                        r.json().get("error").get("message").asText(),
                        r.body());
            }
        }
        JsonNode health = owner.http().get("/api/sessions/" + id + "/health").json();
        assertEquals("active", health.get("state").asText());
        assertEquals(0, health.get("changes").get("modified").asInt());
        assertEquals(0, health.get("changes").get("deleted").asInt());
    }
}
