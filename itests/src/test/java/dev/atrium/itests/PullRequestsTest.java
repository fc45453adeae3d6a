package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pull requests (issue 35), driven as a user would: a fork, pushes with the real {@code git}, a pull request, inline
 * comments, reviews, and merges by each strategy, then {@code git clone} and {@code git fsck --strict} on what the
 * base repository holds.
 */
@SharedServer
class PullRequestsTest {

    @TempDir
    Path tmp;

    private GitClient git(User u) {
        return new GitClient(tmp.resolve("home-" + u.username()), u.http().token());
    }

    /** A public repository of {@code owner} with a.txt (ten lines), b.txt and c.txt on main; returns its id. */
    private String seed(User owner, String name) throws Exception {
        Http.Reply r = owner.http()
                .post("/api/spaces/" + owner.defaultSpaceId() + "/repos", Map.of("name", name, "visibility", "public"));
        assertEquals(201, r.status(), r.body());
        Path work = Files.createDirectories(tmp.resolve("seed-" + name));
        GitClient g = git(owner);
        g.ok(work, "init", "-q", "-b", "main");
        StringBuilder a = new StringBuilder();
        for (int i = 1; i <= 10; i++) {
            a.append("line ").append(i).append('\n');
        }
        Files.writeString(work.resolve("a.txt"), a.toString());
        Files.writeString(work.resolve("b.txt"), "b\n");
        Files.writeString(work.resolve("c.txt"), "c\n");
        g.ok(work, "add", "-A");
        g.ok(work, "commit", "-q", "-m", "seed");
        g.ok(work, "push", "-q", r.get("repository").get("clone_url").asText(), "main");
        return r.get("repository").get("id").asText();
    }

    private Path cloneOf(User u, String repoId, String dir) {
        String url = u.http()
                .get("/api/repos/" + repoId)
                .get("repository")
                .get("clone_url")
                .asText();
        Path to = tmp.resolve(dir);
        git(u).ok(tmp, "clone", "-q", url, to.toString());
        return to;
    }

    /** Commits {@code content} to {@code file} on the current branch of {@code work}. */
    private void change(User u, Path work, String file, String content, String message) throws Exception {
        Files.writeString(work.resolve(file), content);
        git(u).ok(work, "add", "-A");
        git(u).ok(work, "commit", "-q", "-m", message);
    }

    /** A fork of {@code base} in {@code u}'s default workspace; returns its id. */
    private static String fork(User u, String base) {
        Http.Reply forked = u.http().post("/api/repos/" + base + "/fork", Map.of("space_id", u.defaultSpaceId()));
        assertEquals(201, forked.status(), forked.body());
        return forked.get("repository").get("id").asText();
    }

    private static String pulls(String repoId) {
        return "/api/repos/" + repoId + "/pulls";
    }

    private static JsonNode open(User u, String base, String headRepo, String head, String title) {
        Map<String, Object> body = new HashMap<>();
        body.put("title", title);
        body.put("head", head);
        body.put("base", "main");
        body.put("head_repo_id", headRepo);
        Http.Reply r = u.http().post(pulls(base), body);
        assertEquals(201, r.status(), r.body());
        return r.get("pull_request");
    }

    @Test
    void aForksPullRequestIsReviewedAndMergedByEachStrategyWithTheHistoryGitExpects(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        User forker = server.newUser();
        String base = seed(owner, "app");
        String fork = fork(forker, base);
        Path work = cloneOf(forker, fork, "fork");
        GitClient fg = git(forker);
        fg.ok(work, "checkout", "-q", "-b", "feature");
        change(
                forker,
                work,
                "a.txt",
                Files.readString(work.resolve("a.txt")).replace("line 2\n", "line two\n"),
                "a: two");
        change(forker, work, "b.txt", "b1\n", "b: one");
        fg.ok(work, "push", "-q", "origin", "feature");

        JsonNode pr = open(forker, base, fork, "feature", "Spell out two");
        assertEquals(1, pr.get("number").asInt());
        assertEquals("open", pr.get("state").asText());
        String n = pulls(base) + "/1";
        String firstHead = pr.get("head").get("commit").asText();
        assertEquals(fg.ok(work, "rev-parse", "HEAD").trim(), firstHead);

        JsonNode diff = owner.http().get(n + "/diff").json();
        assertEquals(2, diff.get("files").size());
        assertTrue(diff.get("files").get(0).get("patch").asText().contains("+line two"), diff.toString());
        String patch = owner.http().get(n + "/diff?format=patch").body();
        assertTrue(patch.startsWith("diff --git a/a.txt b/a.txt"), patch);

        // two inline comments, then a review that requests changes
        Http.Reply onA =
                owner.http().post(n + "/comments", Map.of("body", "why spell it?", "path", "a.txt", "line", 2));
        assertEquals(201, onA.status(), onA.body());
        Http.Reply onB = owner.http().post(n + "/comments", Map.of("body", "b1?", "path", "b.txt", "line", 1));
        assertEquals(201, onB.status(), onB.body());
        assertEquals(
                400,
                owner.http()
                        .post(n + "/comments", Map.of("body", "x", "path", "a.txt", "line", 11))
                        .status());
        Http.Reply tooFar = owner.http()
                .post(
                        n + "/reviews",
                        Map.of(
                                "event",
                                "comment",
                                "comments",
                                List.of(
                                        Map.of("path", "a.txt", "line", 10, "body", "the last line"),
                                        Map.of("path", "a.txt", "line", 11, "body", "past the end"))));
        assertEquals(400, tooFar.status(), tooFar.body());
        assertTrue(tooFar.body().contains("has 10 lines at the head, not 11"), tooFar.body());
        assertEquals(
                400,
                owner.http()
                        .post(n + "/comments", Map.of("body", "x", "path", "nope.txt", "line", 1))
                        .status());
        assertEquals(
                400,
                owner.http()
                        .post(n + "/comments", Map.of("body", "x", "path", "a.txt"))
                        .status());
        Http.Reply changes = owner.http().post(n + "/reviews", Map.of("event", "request_changes", "body", "b is off"));
        assertEquals(201, changes.status(), changes.body());
        assertEquals("changes_requested", changes.get("review").get("state").asText());
        assertEquals(
                400,
                forker.http().post(n + "/reviews", Map.of("event", "approve")).status(),
                "not one's own");

        // a new push to the head: the pull request follows it, and the comment on the changed file is outdated
        change(forker, work, "b.txt", "b2\n", "b: two");
        fg.ok(work, "push", "-q", "origin", "feature");
        String secondHead = fg.ok(work, "rev-parse", "HEAD").trim();
        JsonNode now = owner.http().get(n).get("pull_request");
        assertEquals(secondHead, now.get("head").get("commit").asText());
        Map<String, Boolean> outdated = new HashMap<>();
        for (JsonNode c : owner.http().get(n + "/comments").get("comments")) {
            outdated.put(c.get("path").asText(), c.get("outdated").asBoolean());
        }
        assertEquals(Map.of("a.txt", false, "b.txt", true), outdated);
        Http.Reply approve = owner.http()
                .post(
                        n + "/reviews",
                        Map.of(
                                "event",
                                "approve",
                                "comments",
                                List.of(Map.of("path", "b.txt", "line", 1, "body", "fine now"))));
        assertEquals(201, approve.status(), approve.body());
        assertEquals(1, approve.get("review").get("comments").size());
        assertEquals(2, owner.http().get(n + "/reviews").get("reviews").size());

        // merge: a merge commit with the base and the head as parents
        assertEquals(
                403,
                forker.http().post(n + "/merge", Map.of("strategy", "merge")).status());
        String mainBefore =
                owner.http().get(n + "/conflicts").get("base_commit").asText();
        Http.Reply unreviewed = owner.http().post(n + "/merge", Map.of("strategy", "merge", "head_commit", firstHead));
        assertEquals(409, unreviewed.status(), "not a head other than the one reviewed: " + unreviewed.body());
        Http.Reply merged = owner.http().post(n + "/merge", Map.of("strategy", "merge", "head_commit", secondHead));
        assertEquals(200, merged.status(), merged.body());
        assertEquals("merged", merged.get("pull_request").get("state").asText());
        String mergeCommit = merged.get("merge_commit").asText();
        Path check = cloneOf(owner, base, "check-merge");
        GitClient og = git(owner);
        assertEquals(mergeCommit, og.ok(check, "rev-parse", "HEAD").trim());
        assertEquals(
                mainBefore + " " + secondHead,
                og.ok(check, "log", "-1", "--format=%P").trim());
        og.ok(check, "fsck", "--strict");
        assertEquals(409, owner.http().post(n + "/merge", null).status(), "merged once");

        // squash: one new commit on main, with the head's changes
        fg.ok(work, "fetch", "-q", server.base() + "/git/" + owner.username() + "/app.git", "main");
        fg.ok(work, "checkout", "-q", "-b", "squashed", "FETCH_HEAD");
        change(forker, work, "c.txt", "c1\n", "c: one");
        change(forker, work, "c.txt", "c2\n", "c: two");
        fg.ok(work, "push", "-q", "origin", "squashed");
        JsonNode squash = open(forker, base, fork, "squashed", "Squash me");
        Http.Reply squashed = owner.http()
                .post(pulls(base) + "/" + squash.get("number").asInt() + "/merge", Map.of("strategy", "squash"));
        assertEquals(200, squashed.status(), squashed.body());
        og.ok(check, "pull", "-q", "--ff-only");
        assertEquals(
                squashed.get("merge_commit").asText(),
                og.ok(check, "rev-parse", "HEAD").trim());
        assertEquals(mergeCommit, og.ok(check, "log", "-1", "--format=%P").trim(), "one parent: the old main");
        assertEquals("c2", Files.readString(check.resolve("c.txt")).trim());
        assertTrue(og.ok(check, "log", "-1", "--format=%s").startsWith("Squash me (#2)"));
        og.ok(check, "fsck", "--strict");

        // rebase: the head's commits replayed one by one on a main that moved, new ids, the same changes
        fg.ok(work, "checkout", "-q", "-b", "rebased", "squashed~2");
        change(
                forker,
                work,
                "a.txt",
                Files.readString(work.resolve("a.txt")).replace("line 9\n", "line nine\n"),
                "a: nine");
        change(forker, work, "d.txt", "d\n", "d: new");
        fg.ok(work, "push", "-q", "origin", "rebased");
        List<String> originals = List.of(
                fg.ok(work, "rev-list", "--reverse", "-2", "HEAD").trim().split("\n"));
        JsonNode rebase = open(forker, base, fork, "rebased", "Rebase me");
        Http.Reply rebased = owner.http()
                .post(pulls(base) + "/" + rebase.get("number").asInt() + "/merge", Map.of("strategy", "rebase"));
        assertEquals(200, rebased.status(), rebased.body());
        og.ok(check, "pull", "-q", "--ff-only");
        List<String> replayed = List.of(
                og.ok(check, "rev-list", "--reverse", "-2", "HEAD").trim().split("\n"));
        assertEquals(
                squashed.get("merge_commit").asText(),
                og.ok(check, "rev-parse", replayed.get(0) + "^").trim());
        for (int i = 0; i < 2; i++) {
            assertNotEquals(originals.get(i), replayed.get(i), "a rebased commit has a new id");
            assertEquals(
                    fg.ok(work, "log", "-1", "--format=%s%n%an <%ae>", originals.get(i)),
                    og.ok(check, "log", "-1", "--format=%s%n%an <%ae>", replayed.get(i)));
            assertEquals(
                    fg.ok(work, "diff-tree", "-r", "--no-commit-id", "--name-status", originals.get(i)),
                    og.ok(check, "diff-tree", "-r", "--no-commit-id", "--name-status", replayed.get(i)));
        }
        assertEquals("line nine", Files.readAllLines(check.resolve("a.txt")).get(8));
        assertEquals("line two", Files.readAllLines(check.resolve("a.txt")).get(1));
        assertEquals("c2", Files.readString(check.resolve("c.txt")).trim());
        og.ok(check, "fsck", "--strict");

        // the events reach people: the base's owner hears of pull requests others open, the author of what was done
        java.util.Set<String> ownerHeard = new java.util.TreeSet<>();
        owner.http()
                .get("/api/notifications?limit=100")
                .get("notifications")
                .forEach(x -> ownerHeard.add(x.get("type").asText()));
        assertEquals(java.util.Set.of("pull.opened"), ownerHeard);
        java.util.List<String> forkerHeard = new ArrayList<>();
        forker.http()
                .get("/api/notifications?limit=100")
                .get("notifications")
                .forEach(x -> forkerHeard.add(x.get("type").asText()));
        java.util.Collections.sort(forkerHeard);
        assertEquals(
                List.of(
                        "pull.commented",
                        "pull.commented",
                        "pull.merged",
                        "pull.merged",
                        "pull.merged",
                        "pull.reviewed",
                        "pull.reviewed"),
                forkerHeard);

        JsonNode merged3 = owner.http().get(pulls(base) + "?state=merged").json();
        assertEquals(3, merged3.get("total").asInt());
        assertEquals(0, owner.http().get(pulls(base)).get("total").asInt(), "none open");
    }

    @Test
    void conflictsAreListedRefusedAndResolvedAndAPushToTheBaseMeanwhileIsNeverLost(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        String base = seed(owner, "clash");
        Path work = cloneOf(owner, base, "clash");
        GitClient g = git(owner);
        g.ok(work, "checkout", "-q", "-b", "topic");
        change(owner, work, "c.txt", "topic\n", "c: topic");
        g.ok(work, "push", "-q", "origin", "topic");
        g.ok(work, "checkout", "-q", "main");
        change(owner, work, "c.txt", "main\n", "c: main");
        g.ok(work, "push", "-q", "origin", "main");
        String mainAt = g.ok(work, "rev-parse", "main").trim();

        JsonNode pr = open(owner, base, base, "topic", "Clash");
        String n = pulls(base) + "/" + pr.get("number").asInt();
        JsonNode conflicts = owner.http().get(n + "/conflicts").json();
        assertFalse(conflicts.get("mergeable").asBoolean());
        assertEquals("c.txt", conflicts.get("conflicts").get(0).get("path").asText());
        assertEquals("content", conflicts.get("conflicts").get(0).get("kind").asText());
        Http.Reply refused = owner.http().post(n + "/merge", Map.of("strategy", "merge"));
        assertEquals(409, refused.status(), refused.body());
        assertTrue(refused.body().contains("c.txt"), refused.body());
        assertEquals(
                mainAt, g.ok(work, "ls-remote", "origin", "refs/heads/main").split("\t")[0], "nothing moved");

        assertEquals(
                400,
                owner.http()
                        .post(n + "/resolve", Map.of("resolutions", List.of(Map.of("path", "a.txt", "content", "x"))))
                        .status());
        Http.Reply resolved = owner.http()
                .post(n + "/resolve", Map.of("resolutions", List.of(Map.of("path", "c.txt", "content", "both\n"))));
        assertEquals(200, resolved.status(), resolved.body());
        assertTrue(owner.http().get(n + "/conflicts").get("mergeable").asBoolean());
        g.ok(work, "fetch", "-q", "origin");
        assertEquals("both", g.ok(work, "show", "origin/topic:c.txt").trim());
        assertEquals(
                mainAt + " ",
                g.ok(work, "log", "-1", "--format=%P", "origin/topic").trim().split(" ")[1] + " ",
                "the resolution merges the base into the head");

        // the base moves between the check and the merge: 409, and the pushed commit stays
        String checked = owner.http().get(n + "/conflicts").get("base_commit").asText();
        change(owner, work, "b.txt", "pushed meanwhile\n", "b: meanwhile");
        g.ok(work, "push", "-q", "origin", "main");
        String pushed = g.ok(work, "rev-parse", "main").trim();
        Http.Reply late = owner.http().post(n + "/merge", Map.of("strategy", "merge", "base_commit", checked));
        assertEquals(409, late.status(), late.body());
        assertEquals(
                pushed, g.ok(work, "ls-remote", "origin", "refs/heads/main").split("\t")[0]);
        Http.Reply merged = owner.http().post(n + "/merge", Map.of("strategy", "merge", "delete_branch", true));
        assertEquals(200, merged.status(), merged.body());
        assertTrue(merged.get("branch_deleted").asBoolean());
        g.ok(work, "fetch", "-q", "--prune", "origin");
        assertEquals(
                "0", g.ok(work, "rev-list", "--count", "origin/main.." + pushed).trim(), "not lost");
        assertEquals(
                pushed, g.ok(work, "rev-parse", "origin/main^1").trim(), "merged onto the commit pushed meanwhile");
        assertTrue(g.ok(work, "branch", "-r").indexOf("origin/topic") < 0, "the head branch was deleted");
        g.ok(work, "fsck", "--strict");
    }

    @Test
    void aDefaultBranchThatTakesMergesOnlyRefusesPushesAndCommitsButTakesAPullRequest(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        String base = seed(owner, "guarded");
        Http.Reply set = owner.http().patch("/api/repos/" + base, Map.of("merges_only", true));
        assertEquals(200, set.status(), set.body());
        assertTrue(set.get("repository").get("merges_only").asBoolean());
        Path work = cloneOf(owner, base, "guarded");
        GitClient g = git(owner);
        String mainAt = g.ok(work, "rev-parse", "main").trim();
        change(owner, work, "b.txt", "direct\n", "direct to main");
        GitClient.Result refused = g.run(work, "push", "origin", "main");
        assertTrue(refused.exit() != 0, refused.both());
        assertTrue(refused.both().contains("merges of pull requests only"), refused.both());
        assertEquals(
                mainAt, g.ok(work, "ls-remote", "origin", "refs/heads/main").split("\t")[0]);
        Http.Reply commit = ReposApiTest.commit(
                owner, base, "main", mainAt, "api commit", List.of(ReposApiTest.file("e.txt", "e")));
        assertEquals(409, commit.status(), commit.body());
        g.ok(work, "bundle", "create", tmp.resolve("main.bundle").toString(), "main");
        Http.Reply bundled = owner.http()
                .send(
                        "POST",
                        "/api/repos/" + base + "/import",
                        Files.readAllBytes(tmp.resolve("main.bundle")),
                        "application/x-git-bundle");
        assertEquals(409, bundled.status(), bundled.body());
        assertTrue(bundled.body().contains("merges of pull requests only"), bundled.body());

        g.ok(work, "push", "-q", "origin", "main:topic");
        JsonNode pr = open(owner, base, base, "topic", "Through a pull request");
        Http.Reply merged =
                owner.http().post(pulls(base) + "/" + pr.get("number").asInt() + "/merge", null);
        assertEquals(200, merged.status(), merged.body());
        assertEquals(
                merged.get("merge_commit").asText(),
                g.ok(work, "ls-remote", "origin", "refs/heads/main").split("\t")[0]);

        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + base, Map.of("merges_only", false))
                        .status());
        g.ok(work, "pull", "-q", "--no-rebase", "origin", "main");
        g.ok(work, "push", "-q", "origin", "main");
    }

    /** The types of the pull request notices {@code u} has, sorted. */
    private static List<String> pullNotices(User u) {
        List<String> heard = new ArrayList<>();
        u.http().get("/api/notifications?limit=100").get("notifications").forEach(x -> {
            if (x.get("type").asText().startsWith("pull.")) {
                heard.add(x.get("type").asText());
            }
        });
        java.util.Collections.sort(heard);
        return heard;
    }

    @Test
    void theAuthorHearsNothingOfAPullRequestWhoseBaseTurnedPrivate(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User forker = server.newUser();
        String base = seed(owner, "turns");
        String fork = fork(forker, base);
        Path work = cloneOf(forker, fork, "turns-fork");
        git(forker).ok(work, "checkout", "-q", "-b", "idea");
        change(forker, work, "b.txt", "b idea\n", "b: idea");
        git(forker).ok(work, "push", "-q", "origin", "idea");
        String n = pulls(base) + "/"
                + open(forker, base, fork, "idea", "An idea").get("number").asInt();

        assertEquals(
                201,
                owner.http()
                        .post(n + "/comments", Map.of("body", "while public"))
                        .status());
        assertEquals(List.of("pull.commented"), pullNotices(forker), "the author hears of a public base's comment");

        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + base, Map.of("visibility", "private"))
                        .status());
        assertEquals(404, forker.http().get(n).status(), "the author can no longer read it");
        assertEquals(
                201,
                owner.http()
                        .post(n + "/comments", Map.of("body", "now private"))
                        .status());
        assertEquals(
                201,
                owner.http()
                        .post(n + "/reviews", Map.of("event", "request_changes", "body", "no"))
                        .status());
        assertEquals(200, owner.http().post(n + "/close", null).status());
        assertEquals(
                List.of("pull.commented"),
                pullNotices(forker),
                "no notice tells the author that the private repository exists or what happens in it");
    }

    @Test
    void strangersBadInputAndAMissingModelGetTheSpecsErrors(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        String base = seed(owner, "quiet");
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + base, Map.of("visibility", "private"))
                        .status());
        Path work = cloneOf(owner, base, "quiet");
        git(owner).ok(work, "checkout", "-q", "-b", "topic");
        change(owner, work, "d.txt", "d\n", "d");
        git(owner).ok(work, "push", "-q", "origin", "topic");
        JsonNode pr = open(owner, base, base, "topic", "Quiet");
        String n = pulls(base) + "/" + pr.get("number").asInt();

        Http.Reply missing = stranger.http().get(pulls("repo_doesnotexist00000000") + "/1");
        for (String path : List.of(pulls(base), n, n + "/diff", n + "/conflicts", n + "/comments", n + "/reviews")) {
            Http.Reply r = stranger.http().get(path);
            assertEquals(404, r.status(), path);
            assertEquals(missing.body(), r.body(), path);
        }
        assertEquals(404, stranger.http().post(n + "/merge", null).status());
        assertEquals(404, owner.http().get(pulls(base) + "/99").status());
        assertEquals(404, owner.http().get(pulls(base) + "/x").status());

        List<Map<String, Object>> bad = new ArrayList<>();
        bad.add(Map.of("title", "t", "head", "nowhere"));
        bad.add(Map.of("title", "t", "head", "topic", "base", "nowhere"));
        bad.add(Map.of("title", "t", "head", "a..b"));
        bad.add(Map.of("head", "topic"));
        bad.add(Map.of("title", "t", "head", "main"));
        bad.add(Map.of("title", "t", "head", "topic", "head_repo_id", "repo_doesnotexist00000000"));
        for (Map<String, Object> body : bad) {
            Http.Reply r = owner.http().post(pulls(base), body);
            assertTrue(r.status() == 400 || r.status() == 404, body + ": " + r.body());
        }
        assertEquals(
                400,
                owner.http().post(n + "/merge", Map.of("strategy", "octopus")).status());
        assertEquals(
                400, owner.http().post(n + "/reviews", Map.of("event", "shrug")).status());
        assertEquals(400, owner.http().patch(n, Map.of("state", "merged")).status());

        // a private fork in another workspace would publish its commits through the pull request
        assertEquals(
                404,
                stranger.http()
                        .post("/api/repos/" + base + "/fork", Map.of("space_id", stranger.defaultSpaceId()))
                        .status(),
                "the base is private");
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + base, Map.of("visibility", "public"))
                        .status());
        Http.Reply forked =
                stranger.http().post("/api/repos/" + base + "/fork", Map.of("space_id", stranger.defaultSpaceId()));
        assertEquals(201, forked.status(), forked.body());
        String privateFork = forked.get("repository").get("id").asText();
        assertEquals(
                200,
                stranger.http()
                        .patch("/api/repos/" + privateFork, Map.of("visibility", "private"))
                        .status());
        Http.Reply fromPrivate =
                stranger.http().post(pulls(base), Map.of("title", "t", "head", "topic", "head_repo_id", privateFork));
        assertEquals(400, fromPrivate.status(), fromPrivate.body());
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + base, Map.of("visibility", "private"))
                        .status());

        Http.Reply draft = owner.http().patch(n, Map.of("draft", true));
        assertEquals(200, draft.status(), draft.body());
        assertEquals(409, owner.http().post(n + "/merge", null).status(), "a draft is not merged");

        // no model is configured for the workspace: the spec's error at once, not a hang
        Http.Reply ai = owner.http().post(n + "/ai-review", null);
        assertEquals(409, ai.status(), ai.body());
        assertEquals("CONFLICT", ai.errorCode());
        assertTrue(ai.body().contains("no model is configured"), ai.body());

        Http.Reply closed = owner.http().post(n + "/close", null);
        assertEquals(200, closed.status(), closed.body());
        assertEquals("closed", closed.get("pull_request").get("state").asText());
        assertEquals(409, owner.http().post(n + "/merge", null).status());
        Http.Reply reopened = owner.http().patch(n, Map.of("state", "open", "draft", false));
        assertEquals("open", reopened.get("pull_request").get("state").asText());
    }
}
