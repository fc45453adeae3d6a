package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote fetch and sync (issue 35): an imported repository or a fork keeps its upstream; {@code fetch} brings the
 * upstream's branches into {@code refs/remotes/upstream/*}; {@code sync} fast-forwards what has not diverged and says
 * what has; {@code sync/status} counts commits ahead and behind. The upstream is another repository of the server,
 * reached over Git smart HTTP on loopback (the test server allows loopback egress), changed with the real {@code git}.
 */
@SharedServer
class RepositorySyncTest {

    @TempDir
    Path tmp;

    private GitClient git(User u) {
        return new GitClient(tmp.resolve("home"), u.http().token());
    }

    /** A public repository of {@code owner} with main and dev, pushed with git; returns the work tree. */
    private Path seed(AtriumServer server, User owner, String name) throws Exception {
        Http.Reply r = owner.http()
                .post("/api/spaces/" + owner.defaultSpaceId() + "/repos", Map.of("name", name, "visibility", "public"));
        assertEquals(201, r.status(), r.body());
        GitClient g = git(owner);
        Path work = Files.createDirectories(tmp.resolve("seed-" + name));
        g.ok(work, "init", "-q", "-b", "main");
        Files.writeString(work.resolve("a.txt"), "a\n");
        g.ok(work, "add", "-A");
        g.ok(work, "commit", "-q", "-m", "seed");
        g.ok(work, "checkout", "-q", "-b", "dev");
        g.ok(work, "commit", "-q", "--allow-empty", "-m", "dev work");
        g.ok(work, "remote", "add", "origin", url(server, owner, name));
        g.ok(work, "push", "-q", "origin", "main", "dev");
        return work;
    }

    private static String url(AtriumServer server, User owner, String name) {
        return server.base() + "/git/" + owner.username() + "/" + name + ".git";
    }

    private static JsonNode branch(JsonNode report, String name) {
        for (JsonNode b : report.get("branches")) {
            if (b.get("name").asText().equals(name)) {
                return b;
            }
        }
        throw new AssertionError("no branch " + name + " in " + report);
    }

    private static String head(User u, String repoId, String branch) {
        for (JsonNode b : u.http().get("/api/repos/" + repoId + "/branches").get("branches")) {
            if (b.get("name").asText().equals(branch)) {
                return b.get("commit").asText();
            }
        }
        return null;
    }

    @Test
    void anImportedRepositoryBehindItsUpstreamIsFastForwardedAndADivergedBranchIsReportedAndLeftAlone(
            AtriumServer server) throws Exception {
        User owner = server.newUser();
        User importer = server.newUser();
        User stranger = server.newUser();
        Path work = seed(server, owner, "origin-repo");
        GitClient seedGit = git(owner);
        seedGit.ok(work, "tag", "v1", "main");
        seedGit.ok(work, "push", "-q", "origin", "v1");
        String v1 = seedGit.ok(work, "rev-parse", "v1").trim();
        Map<String, Object> body = new HashMap<>();
        body.put("url", url(server, owner, "origin-repo"));
        body.put("space_id", importer.defaultSpaceId());
        Http.Reply imported = importer.http().post("/api/repos/import-external", body);
        assertEquals(201, imported.status(), imported.body());
        String id = imported.get("repository").get("id").asText();
        String status = "/api/repos/" + id + "/sync/status";

        JsonNode fresh = importer.http().get(status).json();
        assertEquals("remote", fresh.get("upstream").get("kind").asText());
        assertEquals(
                url(server, owner, "origin-repo"),
                fresh.get("upstream").get("url").asText());
        assertEquals("even", branch(fresh, "main").get("state").asText());
        assertEquals("even", branch(fresh, "dev").get("state").asText());

        // the upstream gains three commits on main and one on dev; the import gains one of its own on dev
        GitClient g = git(owner);
        g.ok(work, "checkout", "-q", "main");
        for (int i = 1; i <= 3; i++) {
            Files.writeString(work.resolve("a.txt"), "a" + i + "\n");
            g.ok(work, "commit", "-q", "-am", "upstream " + i);
        }
        g.ok(work, "checkout", "-q", "dev");
        g.ok(work, "commit", "-q", "--allow-empty", "-m", "upstream dev");
        g.ok(work, "checkout", "-q", "-b", "feature");
        g.ok(work, "commit", "-q", "--allow-empty", "-m", "a new branch");
        g.ok(work, "push", "-q", "origin", "main", "dev", "feature");
        String upstreamMain = g.ok(work, "rev-parse", "main").trim();
        // the upstream moves its tag v1 onto a descendant: the import's v1 must stay where it was
        g.ok(work, "tag", "-f", "v1", "main");
        g.ok(work, "push", "-q", "-f", "origin", "v1");
        String localDev = ReposApiTest.sha(ReposApiTest.commit(
                importer,
                id,
                "dev",
                head(importer, id, "dev"),
                "local dev",
                java.util.List.of(ReposApiTest.file("b.txt", "b"))));

        Http.Reply fetched = importer.http().post("/api/repos/" + id + "/fetch", null);
        assertEquals(200, fetched.status(), fetched.body());
        assertTrue(fetched.body().contains("refs/remotes/upstream/main"), fetched.body());
        assertEquals("v1", fetched.get("rejected_tags").get(0).asText(), fetched.body());
        String clonedTags = git(importer)
                .ok(
                        tmp,
                        "ls-remote",
                        "--tags",
                        imported.get("repository").get("clone_url").asText());
        assertTrue(clonedTags.contains(v1 + "\trefs/tags/v1"), "a local tag never moves: " + clonedTags);
        JsonNode behind = importer.http().get(status).json();
        assertEquals("ok", behind.get("last_result").asText());
        assertEquals("behind", branch(behind, "main").get("state").asText());
        assertEquals(3, branch(behind, "main").get("behind").asInt());
        assertEquals(0, branch(behind, "main").get("ahead").asInt());
        assertEquals("diverged", branch(behind, "dev").get("state").asText());
        assertEquals(1, branch(behind, "dev").get("ahead").asInt());
        assertEquals(1, branch(behind, "dev").get("behind").asInt());
        assertEquals("upstream_only", branch(behind, "feature").get("state").asText());
        assertTrue(!upstreamMain.equals(head(importer, id, "main")), "a fetch moves no local branch");

        Http.Reply synced = importer.http().post("/api/repos/" + id + "/sync", "{}");
        assertEquals(200, synced.status(), synced.body());
        assertEquals(
                "fast_forwarded", branch(synced.json(), "main").get("state").asText());
        assertEquals("diverged", branch(synced.json(), "dev").get("state").asText());
        assertEquals("created", branch(synced.json(), "feature").get("state").asText());
        assertEquals(upstreamMain, head(importer, id, "main"));
        assertEquals(localDev, head(importer, id, "dev"), "the diverged branch is untouched");
        JsonNode after = importer.http().get(status).json();
        assertEquals("even", branch(after, "main").get("state").asText());
        assertEquals("diverged", branch(after, "dev").get("state").asText());

        // what a clone gets is the upstream's main, whole and sound
        Path clone = tmp.resolve("clone");
        GitClient ig = git(importer);
        ig.ok(tmp, "clone", "-q", imported.get("repository").get("clone_url").asText(), clone.toString());
        assertEquals(upstreamMain, ig.ok(clone, "rev-parse", "origin/main").trim());
        assertEquals("4", ig.ok(clone, "rev-list", "--count", "origin/main").trim());
        ig.ok(clone, "fsck", "--strict");

        // a stranger gets what a missing repository gets; a repository without an upstream cannot sync
        Http.Reply missing = stranger.http().post("/api/repos/repo_doesnotexist00000000/sync", null);
        Http.Reply strangers = stranger.http().post("/api/repos/" + id + "/sync", null);
        assertEquals(404, strangers.status());
        assertEquals(missing.body(), strangers.body());
        assertEquals(404, stranger.http().get(status).status());
        String own = ReposApiTest.create(importer, "own");
        Http.Reply none = importer.http().post("/api/repos/" + own + "/sync", null);
        assertEquals(409, none.status(), none.body());
        assertEquals(
                409, importer.http().post("/api/repos/" + own + "/fetch", null).status());
        assertTrue(importer.http()
                .get("/api/repos/" + own + "/sync/status")
                .get("upstream")
                .isNull());
        assertEquals(
                400,
                importer.http()
                        .post("/api/repos/" + own + "/fetch-remote", Map.of("url", "not a url"))
                        .status());
        assertEquals(
                400,
                importer.http()
                        .post("/api/repos/" + id + "/sync", "{\"token\": 5}")
                        .status());

        // fetch-remote names a new upstream for a repository that had none
        Http.Reply named = importer.http()
                .post("/api/repos/" + own + "/fetch-remote", Map.of("url", url(server, owner, "origin-repo")));
        assertEquals(200, named.status(), named.body());
        assertEquals("remote", named.get("upstream").get("kind").asText());
        JsonNode ownStatus =
                importer.http().get("/api/repos/" + own + "/sync/status").json();
        assertEquals("upstream_only", branch(ownStatus, "main").get("state").asText());
        assertEquals(
                200, importer.http().post("/api/repos/" + own + "/sync", null).status());
        assertEquals(upstreamMain, head(importer, own, "main"));
    }

    @Test
    void aForkFetchesFromTheRepositoryItWasForkedFrom(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User forker = server.newUser();
        Path work = seed(server, owner, "forked");
        String source = owner.http()
                .get("/api/spaces/" + owner.defaultSpaceId() + "/repos")
                .get("repositories")
                .get(0)
                .get("id")
                .asText();
        Http.Reply fork =
                forker.http().post("/api/repos/" + source + "/fork", Map.of("space_id", forker.defaultSpaceId()));
        assertEquals(201, fork.status(), fork.body());
        String id = fork.get("repository").get("id").asText();
        GitClient g = git(owner);
        g.ok(work, "checkout", "-q", "main");
        g.ok(work, "commit", "-q", "--allow-empty", "-m", "after the fork");
        g.ok(work, "push", "-q", "origin", "main");

        JsonNode status = forker.http().get("/api/repos/" + id + "/sync/status").json();
        assertEquals("fork", status.get("upstream").get("kind").asText());
        assertEquals(source, status.get("upstream").get("repository_id").asText());
        assertEquals("even", branch(status, "main").get("state").asText(), "not fetched yet");
        Http.Reply synced = forker.http().post("/api/repos/" + id + "/sync", null);
        assertEquals(200, synced.status(), synced.body());
        assertEquals(
                "fast_forwarded", branch(synced.json(), "main").get("state").asText());
        assertEquals(1, branch(synced.json(), "main").get("behind").asInt());

        // a default branch that takes merges only is reported behind, never moved by a sync
        assertEquals(
                200,
                forker.http()
                        .patch("/api/repos/" + id, Map.of("merges_only", true))
                        .status());
        g.ok(work, "commit", "-q", "--allow-empty", "-m", "after merges only");
        g.ok(work, "push", "-q", "origin", "main");
        String before = head(forker, id, "main");
        Http.Reply guarded = forker.http().post("/api/repos/" + id + "/sync", null);
        assertEquals(200, guarded.status(), guarded.body());
        assertEquals("merges_only", branch(guarded.json(), "main").get("state").asText());
        assertEquals(before, head(forker, id, "main"));

        // once the source is private, the fork's owner can no longer fetch from it
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + source, Map.of("visibility", "private"))
                        .status());
        Http.Reply refused = forker.http().post("/api/repos/" + id + "/fetch", null);
        assertEquals(409, refused.status(), refused.body());
    }
}
