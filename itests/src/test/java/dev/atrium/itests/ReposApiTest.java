package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The repositories API, endpoint by endpoint, against the launched server. */
@SharedServer
class ReposApiTest {

    private static final String ZERO = "0".repeat(40);

    @TempDir
    Path tmp;

    static String create(User u, String name) {
        Http.Reply r = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", name));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    static Map<String, Object> file(String path, String content) {
        return Map.of("path", path, "content", content);
    }

    static Http.Reply commit(
            User u, String repoId, String branch, String parent, String message, List<Map<String, Object>> changes) {
        Map<String, Object> body = new java.util.HashMap<>();
        body.put("branch", branch);
        if (parent != null) {
            body.put("parent", parent);
        }
        body.put("message", message);
        body.put("changes", changes);
        return u.http().post("/api/repos/" + repoId + "/commit", body);
    }

    static String sha(Http.Reply commit) {
        assertEquals(201, commit.status(), commit.body());
        return commit.get("commit").get("sha").asText();
    }

    @Test
    void repositoriesAreCreatedListedUpdatedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.defaultSpaceId() + "/repos";
        Http.Reply created =
                u.http().post(base, Map.of("name", "site", "description", "my site", "visibility", "public"));
        assertEquals(201, created.status(), created.body());
        JsonNode repo = created.get("repository");
        assertEquals("site", repo.get("name").asText());
        assertEquals("public", repo.get("visibility").asText());
        assertEquals("main", repo.get("default_branch").asText());
        assertEquals(
                server.base() + "/git/" + u.username() + "/site.git",
                repo.get("clone_url").asText());
        String id = repo.get("id").asText();

        JsonNode list = u.http().get(base).json();
        assertEquals(1, list.get("repositories").size());
        assertEquals(
                Set.of("id", "name", "default_branch"),
                WorkspacesTest.fields(list.get("repositories").get(0)));
        assertEquals(409, u.http().post(base, Map.of("name", "site")).status());
        assertEquals(400, u.http().post(base, Map.of("name", "../etc")).status());
        assertEquals(400, u.http().post(base, Map.of("name", "x.git")).status());
        assertEquals(
                400,
                u.http()
                        .post(base, Map.of("name", "ok", "visibility", "secret"))
                        .status());
        assertEquals(400, u.http().post(base, Map.of("name", 12)).status());

        Http.Reply patched = u.http()
                .patch("/api/repos/" + id, Map.of("name", "website", "description", "new", "visibility", "private"));
        assertEquals(200, patched.status(), patched.body());
        assertEquals("website", patched.get("repository").get("name").asText());
        assertEquals("private", patched.get("repository").get("visibility").asText());
        assertEquals(patched.get("repository"), u.http().get("/api/repos/" + id).get("repository"));
        assertEquals(200, u.http().delete("/api/repos/" + id).status());
        assertEquals(404, u.http().get("/api/repos/" + id).status());
        assertFalse(Files.exists(server.data.resolve("git").resolve(id + ".git")), "the Git directory is removed");
    }

    @Test
    void anotherPrincipalGetsNotFoundForEveryRouteOfAPrivateRepository(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String id = create(owner, "secret");
        sha(commit(owner, id, "main", ZERO, "first", List.of(file("a.txt", "a"))));
        Http.Reply missing = stranger.http().get("/api/repos/repo_doesnotexist00000000");
        assertEquals(404, missing.status());
        List<String> gets = List.of(
                "",
                "/branches",
                "/commits",
                "/tree/main",
                "/tree/main/a.txt",
                "/blob/main/a.txt",
                "/log",
                "/log/main",
                "/log/main/a.txt",
                "/diff/main...main",
                "/blame/main/a.txt",
                "/status",
                "/export",
                "/search?q=a",
                "/star");
        for (String g : gets) {
            Http.Reply r = stranger.http().get("/api/repos/" + id + g);
            assertEquals(404, r.status(), g + ": " + r.body());
            assertEquals(
                    missing.body().replace("repo_doesnotexist00000000", id),
                    r.body().replace("repo_doesnotexist00000000", id),
                    g);
        }
        assertEquals(
                404,
                stranger.http()
                        .patch("/api/repos/" + id, Map.of("name", "mine"))
                        .status());
        assertEquals(404, stranger.http().delete("/api/repos/" + id).status());
        assertEquals(
                404, stranger.http().post("/api/repos/" + id + "/star", null).status());
        assertEquals(
                404,
                stranger.http()
                        .post("/api/repos/" + id + "/fork", Map.of("space_id", stranger.defaultSpaceId()))
                        .status());
        assertEquals(
                404,
                stranger.http()
                        .post("/api/repos/" + id + "/branches", Map.of("name", "x"))
                        .status());
        assertEquals(
                404,
                commit(stranger, id, "main", null, "hijack", List.of(file("b.txt", "b")))
                        .status());
        assertEquals(
                404,
                stranger.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/repos")
                        .status());
        assertEquals(
                404,
                stranger.http()
                        .post("/api/spaces/" + owner.defaultSpaceId() + "/repos", Map.of("name", "x"))
                        .status());
        assertEquals(
                404,
                stranger.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/git/log")
                        .status());
        // a public repository is readable by others, not writable
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("visibility", "public"))
                        .status());
        assertEquals(200, stranger.http().get("/api/repos/" + id + "/tree/main").status());
        assertEquals(
                403,
                stranger.http()
                        .patch("/api/repos/" + id, Map.of("name", "mine"))
                        .status());
        assertEquals(
                403,
                commit(stranger, id, "main", null, "hijack", List.of(file("b.txt", "b")))
                        .status());
    }

    @Test
    void commitsFromJsonCheckTheirParentAndBuildHistory(AtriumServer server) {
        User u = server.newUser();
        String id = create(u, "history");
        String c1 = sha(commit(
                u, id, "main", ZERO, "first", List.of(file("README.md", "hello\n"), file("src/app.txt", "v1\n"))));
        String c2 = sha(commit(u, id, "main", c1, "second", List.of(file("src/app.txt", "v2\n"))));
        Http.Reply stale = commit(u, id, "main", c1, "from a stale parent", List.of(file("src/app.txt", "v3\n")));
        assertEquals(409, stale.status(), stale.body());
        assertEquals("CONFLICT", stale.errorCode());
        assertEquals(
                409,
                commit(u, id, "main", ZERO, "main exists already", List.of(file("x", "x")))
                        .status());
        assertEquals(
                400,
                commit(u, id, "main", c2, "bad path", List.of(file("../escape", "x")))
                        .status());
        assertEquals(
                400,
                commit(u, id, "main", c2, "git dir", List.of(file(".git/config", "x")))
                        .status());
        assertEquals(400, commit(u, id, "main", c2, "no changes", List.of()).status());
        assertEquals(
                400,
                commit(u, id, "main", "abc", "short parent", List.of(file("x", "x")))
                        .status());
        assertEquals(
                400,
                commit(u, id, "main", c2, "delete missing", List.of(Map.of("path", "nope.txt", "action", "delete")))
                        .status());
        String c3 = sha(commit(u, id, "main", null, "third", List.of(Map.of("path", "README.md", "action", "delete"))));

        JsonNode commits = u.http().get("/api/repos/" + id + "/commits").json();
        assertEquals(List.of(c3, c2, c1), shas(commits.get("commits")));
        assertEquals(
                List.of(c3),
                shas(u.http().get("/api/repos/" + id + "/commits?limit=1").get("commits")));
        assertTrue(u.http()
                .get("/api/repos/" + id + "/commits?limit=1")
                .get("has_more")
                .asBoolean());
        assertEquals(
                List.of(c2),
                shas(u.http()
                        .get("/api/repos/" + id + "/commits?limit=1&offset=1")
                        .get("commits")));
        assertEquals(
                List.of(c2, c1),
                shas(u.http()
                        .get("/api/repos/" + id + "/commits?path=src/app.txt")
                        .get("commits")));
        assertEquals(
                List.of(c1),
                shas(u.http().get("/api/repos/" + id + "/commits?ref=" + c1).get("commits")));
        assertEquals(
                3,
                u.http()
                        .get("/api/repos/" + id + "/commits?author=" + u.principalId())
                        .get("commits")
                        .size());
        assertEquals(
                0,
                u.http()
                        .get("/api/repos/" + id + "/commits?author=nobody-else")
                        .get("commits")
                        .size());
        assertEquals(
                3,
                u.http()
                        .get("/api/repos/" + id + "/commits?since=2000-01-01")
                        .get("commits")
                        .size());
        assertEquals(
                0,
                u.http()
                        .get("/api/repos/" + id + "/commits?until=2000-01-01T00:00:00Z")
                        .get("commits")
                        .size());
        assertEquals(
                400,
                u.http().get("/api/repos/" + id + "/commits?since=yesterday").status());
        assertEquals(
                List.of(c3, c2, c1),
                shas(u.http().get("/api/repos/" + id + "/log").get("commits")));
        assertEquals(
                List.of(c2, c1),
                shas(u.http().get("/api/repos/" + id + "/log/" + c2).get("commits")));
        assertEquals(
                List.of(c3, c1),
                shas(u.http().get("/api/repos/" + id + "/log/main/README.md").get("commits")));
        assertEquals(
                404, u.http().get("/api/repos/" + id + "/log/no-such-branch").status());
        JsonNode first = commits.get("commits").get(2);
        assertEquals("first", first.get("title").asText());
        assertEquals(0, first.get("parents").size());
        assertEquals(u.principalId(), first.get("author").get("name").asText());
    }

    static List<String> shas(JsonNode commits) {
        List<String> out = new ArrayList<>();
        commits.forEach(c -> out.add(c.get("sha").asText()));
        return out;
    }

    @Test
    void treesAndBlobsAreServedAndABinaryFileRoundTripsByteExact(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = create(u, "files");
        byte[] binary = new byte[70_000];
        new Random(7).nextBytes(binary);
        binary[0] = 0;
        String c1 = sha(commit(
                u,
                id,
                "main",
                ZERO,
                "files",
                List.of(
                        file("docs/guide.md", "# Guide\nünïcode ✓\n"),
                        Map.of(
                                "path",
                                "bin/data.bin",
                                "content",
                                Base64.getEncoder().encodeToString(binary),
                                "encoding",
                                "base64"),
                        Map.of("path", "run.sh", "content", "#!/bin/sh\necho hi\n", "executable", true))));

        JsonNode root = u.http().get("/api/repos/" + id + "/tree/main").json();
        assertEquals(c1, root.get("commit").asText());
        Set<String> names = new HashSet<>();
        root.get("entries")
                .forEach(e ->
                        names.add(e.get("name").asText() + ":" + e.get("type").asText()));
        assertEquals(Set.of("bin:tree", "docs:tree", "run.sh:blob"), names);
        JsonNode docs = u.http().get("/api/repos/" + id + "/tree/main/docs").json();
        assertEquals("docs/guide.md", docs.get("entries").get(0).get("path").asText());
        assertEquals(404, u.http().get("/api/repos/" + id + "/tree/main/nope").status());
        assertEquals(400, u.http().get("/api/repos/" + id + "/tree/main/run.sh").status());

        JsonNode text =
                u.http().get("/api/repos/" + id + "/blob/main/docs/guide.md").json();
        assertEquals("utf-8", text.get("encoding").asText());
        assertEquals("# Guide\nünïcode ✓\n", text.get("content").asText());
        JsonNode exe =
                u.http().get("/api/repos/" + id + "/blob/" + c1 + "/run.sh").json();
        assertEquals("100755", exe.get("mode").asText());

        JsonNode bin =
                u.http().get("/api/repos/" + id + "/blob/main/bin/data.bin").json();
        assertEquals("base64", bin.get("encoding").asText());
        assertArrayEquals(binary, Base64.getDecoder().decode(bin.get("content").asText()));
        HttpResponse<byte[]> raw = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(
                                        server.base() + "/api/repos/" + id + "/blob/main/bin/data.bin?format=raw"))
                                .header("Authorization", "Bearer " + u.http().token())
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, raw.statusCode());
        assertEquals(
                "application/octet-stream",
                raw.headers().firstValue("Content-Type").orElse(""));
        assertArrayEquals(binary, raw.body());
        assertEquals(
                404, u.http().get("/api/repos/" + id + "/blob/main/missing.txt").status());
        assertEquals(400, u.http().get("/api/repos/" + id + "/blob/main/docs").status());
        assertEquals(400, u.http().get("/api/repos/" + id + "/blob/main").status());
        assertEquals(
                400,
                u.http().get("/api/repos/" + id + "/blob/main/x?format=yaml").status());
    }

    @Test
    void branchesAreListedCreatedMadeDefaultAndDeleted(AtriumServer server) {
        User u = server.newUser();
        String id = create(u, "branching");
        String c1 = sha(commit(u, id, "main", ZERO, "first", List.of(file("a", "1"))));
        Http.Reply created =
                u.http().post("/api/repos/" + id + "/branches", Map.of("name", "feature/x", "from", "main"));
        assertEquals(201, created.status(), created.body());
        assertEquals(c1, created.get("branch").get("commit").asText());
        assertEquals(
                409,
                u.http()
                        .post("/api/repos/" + id + "/branches", Map.of("name", "feature/x"))
                        .status());
        assertEquals(
                400,
                u.http()
                        .post("/api/repos/" + id + "/branches", Map.of("name", "bad..name"))
                        .status());
        assertEquals(
                404,
                u.http()
                        .post("/api/repos/" + id + "/branches", Map.of("name", "y", "from", "nowhere"))
                        .status());
        assertEquals(
                2,
                u.http().get("/api/repos/" + id + "/branches").get("branches").size());

        String c2 = sha(commit(u, id, "feature/x", c1, "on feature", List.of(file("b", "2"))));
        assertEquals(409, u.http().delete("/api/repos/" + id + "/branches/main").status());
        Http.Reply made = u.http().post("/api/repos/" + id + "/branches/feature/x/default", null);
        assertEquals(200, made.status(), made.body());
        assertEquals("feature/x", made.get("repository").get("default_branch").asText());
        assertEquals(
                List.of(c2, c1),
                shas(u.http().get("/api/repos/" + id + "/commits").get("commits")));
        assertEquals(200, u.http().delete("/api/repos/" + id + "/branches/main").status());
        assertEquals(404, u.http().delete("/api/repos/" + id + "/branches/main").status());
        assertEquals(
                1,
                u.http().get("/api/repos/" + id + "/branches").get("branches").size());
        assertEquals(
                404,
                u.http()
                        .post("/api/repos/" + id + "/branches/nothing/default", null)
                        .status());
    }

    @Test
    void diffsBlameStatusAndSearchDescribeTheHistory(AtriumServer server) {
        User u = server.newUser();
        String id = create(u, "describe");
        String c1 = sha(
                commit(u, id, "main", ZERO, "first", List.of(file("poem.txt", "roses are red\nviolets are blue\n"))));
        assertEquals(
                201,
                u.http()
                        .post("/api/repos/" + id + "/branches", Map.of("name", "topic"))
                        .status());
        String c2 = sha(commit(
                u,
                id,
                "topic",
                c1,
                "edit",
                List.of(
                        file("poem.txt", "roses are red\nviolets are violet\nsugar\n"),
                        file("notes/todo.md", "find a rhyme\n"))));
        sha(commit(u, id, "main", c1, "main moves on", List.of(file("other.txt", "unrelated\n"))));

        JsonNode diff = u.http().get("/api/repos/" + id + "/diff/main...topic").json();
        assertEquals(c1, diff.get("merge_base").asText());
        assertEquals(c2, diff.get("head").asText());
        Map<String, JsonNode> files = new java.util.HashMap<>();
        diff.get("files").forEach(f -> files.put(f.get("path").asText(), f));
        assertEquals(Set.of("poem.txt", "notes/todo.md"), files.keySet(), "three dots: only what topic changed");
        assertEquals("modify", files.get("poem.txt").get("status").asText());
        assertEquals(2, files.get("poem.txt").get("additions").asInt());
        assertEquals(1, files.get("poem.txt").get("deletions").asInt());
        assertEquals("add", files.get("notes/todo.md").get("status").asText());
        assertTrue(
                diff.get("patch").asText().contains("-violets are blue\n+violets are violet\n"),
                diff.get("patch").asText());
        JsonNode direct = u.http().get("/api/repos/" + id + "/diff/main..topic").json();
        assertEquals(3, direct.get("files").size(), "two dots compare the trees directly");
        Http.Reply patch = u.http().get("/api/repos/" + id + "/diff/main...topic?format=patch");
        assertTrue(patch.body().startsWith("diff --git"), patch.body());
        assertEquals(400, u.http().get("/api/repos/" + id + "/diff/main").status());
        assertEquals(404, u.http().get("/api/repos/" + id + "/diff/main...nope").status());

        JsonNode blame =
                u.http().get("/api/repos/" + id + "/blame/topic/poem.txt").json();
        assertEquals(3, blame.get("lines").size());
        assertEquals(c1, blame.get("lines").get(0).get("sha").asText());
        assertEquals(c2, blame.get("lines").get(1).get("sha").asText());
        assertEquals(
                "violets are violet", blame.get("lines").get(1).get("content").asText());
        assertEquals(400, u.http().get("/api/repos/" + id + "/blame/topic").status());

        JsonNode status = u.http().get("/api/repos/" + id + "/status").json();
        assertEquals(false, status.get("empty").asBoolean());
        assertEquals(2, status.get("branches").asInt());
        assertTrue(status.get("size_bytes").asLong() > 0);

        JsonNode byContent = u.http()
                .get("/api/repos/" + id + "/search?q=VIOLET&ref=topic&type=content")
                .json();
        assertEquals(1, byContent.get("results").size());
        assertEquals(2, byContent.get("results").get(0).get("line").asInt());
        JsonNode byPath = u.http()
                .get("/api/repos/" + id + "/search?q=todo&ref=topic&type=path")
                .json();
        assertEquals("notes/todo.md", byPath.get("results").get(0).get("path").asText());
        assertEquals(400, u.http().get("/api/repos/" + id + "/search").status());
        assertEquals(
                400, u.http().get("/api/repos/" + id + "/search?q=x&type=regex").status());
    }

    @Test
    void exportsStreamTheTreeAsTarGzAndZip(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = create(u, "exported");
        String longName = "deep/" + "d".repeat(90) + "/" + "f".repeat(60) + ".txt";
        sha(commit(u, id, "main", ZERO, "files", List.of(file("a.txt", "alpha\n"), file(longName, "long\n"))));
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<byte[]> tgz = client.send(
                HttpRequest.newBuilder(URI.create(server.base() + "/api/repos/" + id + "/export"))
                        .header("Authorization", "Bearer " + u.http().token())
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, tgz.statusCode());
        Path dir = Files.createDirectories(tmp.resolve("tar"));
        Files.write(dir.resolve("x.tar.gz"), tgz.body());
        Process tar = new ProcessBuilder("tar", "-xzf", "x.tar.gz")
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String tarOut = new String(tar.getInputStream().readAllBytes());
        assertEquals(0, tar.waitFor(), tarOut);
        Path top;
        try (var s = Files.list(dir)) {
            top = s.filter(Files::isDirectory).findFirst().orElseThrow();
        }
        assertTrue(top.getFileName().toString().startsWith("exported-"));
        assertEquals("alpha\n", Files.readString(top.resolve("a.txt")));
        assertEquals("long\n", Files.readString(top.resolve(longName)), "GNU long names survive");

        HttpResponse<byte[]> zip = client.send(
                HttpRequest.newBuilder(URI.create(server.base() + "/api/repos/" + id + "/export?format=zip"))
                        .header("Authorization", "Bearer " + u.http().token())
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals("application/zip", zip.headers().firstValue("Content-Type").orElse(""));
        Set<String> entries = new HashSet<>();
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip.body()))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                entries.add(e.getName().substring(e.getName().indexOf('/') + 1));
            }
        }
        assertEquals(Set.of("a.txt", longName), entries);
        assertEquals(
                400, u.http().get("/api/repos/" + id + "/export?format=rar").status());
    }

    @Test
    void starsForksAndTheStarredList(AtriumServer server) {
        User owner = server.newUser();
        User fan = server.newUser();
        String id = create(owner, "popular");
        String c1 = sha(commit(owner, id, "main", ZERO, "first", List.of(file("a", "1"))));
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("visibility", "public"))
                        .status());

        assertFalse(fan.http().get("/api/repos/" + id + "/star").get("starred").asBoolean());
        JsonNode starred = fan.http().post("/api/repos/" + id + "/star", null).json();
        assertTrue(starred.get("starred").asBoolean());
        assertEquals(1, starred.get("stars").asInt());
        assertEquals(
                1,
                fan.http().post("/api/repos/" + id + "/star", null).get("stars").asInt(),
                "starring twice counts once");
        JsonNode list = fan.http().get("/api/repos/starred").json();
        assertEquals(1, list.get("total").asInt());
        assertEquals(id, list.get("repositories").get(0).get("id").asText());
        assertEquals(
                0, fan.http().delete("/api/repos/" + id + "/star").get("stars").asInt());
        assertEquals(0, fan.http().get("/api/repos/starred").get("total").asInt());

        Http.Reply fork = fan.http().post("/api/repos/" + id + "/fork", Map.of("space_id", fan.defaultSpaceId()));
        assertEquals(201, fork.status(), fork.body());
        String forkId = fork.get("repository").get("id").asText();
        assertEquals(id, fork.get("repository").get("forked_from").asText());
        assertEquals(
                List.of(c1),
                shas(fan.http().get("/api/repos/" + forkId + "/commits").get("commits")));
        // the fork moves on its own; the source does not see it
        sha(commit(fan, forkId, "main", c1, "fork work", List.of(file("b", "2"))));
        assertEquals(
                List.of(c1),
                shas(owner.http().get("/api/repos/" + id + "/commits").get("commits")));
        assertEquals(
                400, fan.http().post("/api/repos/" + id + "/fork", null).status(), "a stranger must name a workspace");
        assertEquals(
                404,
                fan.http()
                        .post("/api/repos/" + id + "/fork", Map.of("space_id", owner.defaultSpaceId()))
                        .status());
        Http.Reply own = owner.http().post("/api/repos/" + id + "/fork", null);
        assertEquals(201, own.status(), own.body());
        assertEquals("popular-fork", own.get("repository").get("name").asText());
    }

    @Test
    void importsOfBundlesAndArchives(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = create(u, "imported");
        GitClient git = new GitClient(tmp.resolve("home"), null);
        Path work = git.newWorkingCopy(tmp.resolve("w"), "x.txt", "from a bundle\n");
        git.ok(work, "tag", "v1");
        git.ok(work, "bundle", "create", tmp.resolve("r.bundle").toString(), "--all");
        byte[] bundle = Files.readAllBytes(tmp.resolve("r.bundle"));
        Http.Reply imported = u.http().send("POST", "/api/repos/" + id + "/import", bundle, "application/x-git-bundle");
        assertEquals(200, imported.status(), imported.body());
        assertEquals(
                git.ok(work, "rev-parse", "HEAD"),
                u.http()
                        .get("/api/repos/" + id + "/branches")
                        .get("branches")
                        .get(0)
                        .get("commit")
                        .asText());
        assertEquals(
                "from a bundle\n",
                u.http()
                        .get("/api/repos/" + id + "/blob/v1/x.txt")
                        .get("content")
                        .asText());
        assertEquals(
                400,
                u.http()
                        .send(
                                "POST",
                                "/api/repos/" + id + "/import",
                                "not a bundle".getBytes(),
                                "application/x-git-bundle")
                        .status());
        // a bundle whose main does not descend from ours is refused, ours stays
        Path other = git.newWorkingCopy(tmp.resolve("o"), "y.txt", "unrelated\n");
        git.ok(other, "bundle", "create", tmp.resolve("o.bundle").toString(), "main");
        Http.Reply rewrite = u.http()
                .send(
                        "POST",
                        "/api/repos/" + id + "/import",
                        Files.readAllBytes(tmp.resolve("o.bundle")),
                        "application/x-git-bundle");
        assertEquals(409, rewrite.status(), rewrite.body());
        assertEquals(
                git.ok(work, "rev-parse", "HEAD"),
                u.http()
                        .get("/api/repos/" + id + "/commits")
                        .get("commits")
                        .get(0)
                        .get("sha")
                        .asText());

        ByteArrayOutputStream zipBytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(zipBytes)) {
            for (String name : List.of("project-1.0/index.html", "project-1.0/css/site.css")) {
                zip.putNextEntry(new ZipEntry(name));
                zip.write(("content of " + name).getBytes(StandardCharsets.UTF_8));
                zip.closeEntry();
            }
        }
        String archiveRepo = create(u, "from-zip");
        Http.Reply fromZip = u.http()
                .send("POST", "/api/repos/" + archiveRepo + "/import", zipBytes.toByteArray(), "application/zip");
        assertEquals(201, fromZip.status(), fromZip.body());
        assertEquals(
                "content of project-1.0/css/site.css",
                u.http()
                        .get("/api/repos/" + archiveRepo + "/blob/main/css/site.css")
                        .get("content")
                        .asText());
        Path tarDir = Files.createDirectories(tmp.resolve("t/pkg"));
        Files.writeString(tarDir.resolve("main.py"), "print('hi')\n");
        Process tar = new ProcessBuilder("tar", "-czf", "../pkg.tar.gz", ".")
                .directory(tarDir.toFile())
                .start();
        assertEquals(0, tar.waitFor());
        Http.Reply fromTar = u.http()
                .send(
                        "POST",
                        "/api/repos/" + archiveRepo + "/import",
                        Files.readAllBytes(tmp.resolve("t/pkg.tar.gz")),
                        "application/gzip");
        assertEquals(201, fromTar.status(), fromTar.body());
        JsonNode tree = u.http().get("/api/repos/" + archiveRepo + "/tree/main").json();
        assertEquals(1, tree.get("entries").size(), "an archive import holds exactly the archive's files");
        assertEquals(
                400,
                u.http()
                        .send("POST", "/api/repos/" + archiveRepo + "/import", "x".getBytes(), "text/plain")
                        .status());
        assertNotNull(new GZIPInputStream(new ByteArrayInputStream(Files.readAllBytes(tmp.resolve("t/pkg.tar.gz")))));
    }

    @Test
    void theWorkspaceGitEndpointsActOnTheDefaultRepositoryWhichIsNeverImplicit(AtriumServer server) {
        User u = server.newUser();
        String git = "/api/spaces/" + u.defaultSpaceId() + "/git";
        Http.Reply none = u.http().get(git + "/log");
        assertEquals(404, none.status());
        assertTrue(none.json().path("error").path("message").asText().contains("init-repo"), none.body());
        assertEquals(
                0,
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/repos")
                        .get("repositories")
                        .size(),
                "nothing was created");

        Http.Reply init = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/init-repo", null);
        assertEquals(201, init.status(), init.body());
        assertTrue(init.get("repository").get("is_default").asBoolean());
        assertEquals(
                409,
                u.http()
                        .post("/api/spaces/" + u.defaultSpaceId() + "/init-repo", null)
                        .status());

        Http.Reply c1 = u.http()
                .post(git + "/commit", Map.of("message", "notes", "changes", List.of(file("notes.md", "one\n"))));
        String s1 = sha(c1);
        String s2 = sha(u.http()
                .post(
                        git + "/commit",
                        Map.of(
                                "message",
                                "more",
                                "parent",
                                s1,
                                "changes",
                                List.of(file("notes.md", "one\ntwo\n"), file("other.md", "x\n")))));
        assertEquals(
                409,
                u.http()
                        .post(
                                git + "/commit",
                                Map.of(
                                        "message",
                                        "stale",
                                        "parent",
                                        s1,
                                        "changes",
                                        List.of(file("notes.md", "three\n"))))
                        .status());
        assertEquals(List.of(s2, s1), shas(u.http().get(git + "/log").get("commits")));
        assertEquals(
                List.of(s2, s1), shas(u.http().get(git + "/history/notes.md").get("commits")));
        assertEquals(List.of(s2), shas(u.http().get(git + "/history/other.md").get("commits")));
        JsonNode detail = u.http().get(git + "/commits/" + s2).json();
        assertEquals(s2, detail.get("commit").get("sha").asText());
        assertEquals(2, detail.get("files").size());
        JsonNode diff = u.http().get(git + "/diff/" + s2).json();
        assertTrue(
                diff.get("patch").asText().contains("+two"), diff.get("patch").asText());
        Http.Reply restored = u.http().post(git + "/restore", Map.of("path", "notes.md", "commit", s1));
        String s3 = sha(restored);
        String repoId = init.get("repository").get("id").asText();
        assertEquals(
                "one\n",
                u.http()
                        .get("/api/repos/" + repoId + "/blob/" + s3 + "/notes.md")
                        .get("content")
                        .asText());
        sha(u.http().post(git + "/restore", Map.of("path", "other.md", "commit", s1)));
        assertEquals(
                404,
                u.http().get("/api/repos/" + repoId + "/blob/main/other.md").status(),
                "restoring a file absent then removes it");
        assertEquals(404, u.http().get(git + "/commits/" + "f".repeat(40)).status());
    }
}
