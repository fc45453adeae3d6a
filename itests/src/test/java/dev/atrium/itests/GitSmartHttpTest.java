package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Git smart HTTP driven by the real {@code git} client. */
@SharedServer
class GitSmartHttpTest {

    @TempDir
    Path tmp;

    private static String createRepo(User u, String name, String visibility) {
        Http.Reply r = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", name, "visibility", visibility));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    private static String url(AtriumServer server, String owner, String repo) {
        return server.base() + "/git/" + owner + "/" + repo + ".git";
    }

    private GitClient git(User u) {
        return new GitClient(tmp.resolve("home"), u.http().token());
    }

    private GitClient anonymous() {
        return GitClient.anonymous(tmp.resolve("home"));
    }

    @Test
    void cloneWorksWithProtocolV0AndV2AndShallowAndFetch(AtriumServer server) throws Exception {
        User u = server.newUser();
        createRepo(u, "proto", "private");
        GitClient git = git(u);
        Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "hello\n");
        git.ok(work, "commit", "-q", "--allow-empty", "-m", "second");
        git.ok(work, "push", url(server, u.username(), "proto"), "main");
        String head = git.ok(work, "rev-parse", "HEAD");

        for (String version : List.of("0", "2")) {
            Path clone = tmp.resolve("clone-v" + version);
            GitClient.Result r = git.run(
                    tmp,
                    List.of("GIT_TRACE_PACKET=1"),
                    "-c",
                    "protocol.version=" + version,
                    "clone",
                    url(server, u.username(), "proto"),
                    clone.toString());
            assertEquals(0, r.exit(), r.both());
            assertEquals(
                    version.equals("2"),
                    r.err().contains("git< version 2"),
                    "protocol v" + version + " was spoken:\n" + r.err());
            assertEquals(head, git.ok(clone, "rev-parse", "HEAD"));
            assertEquals("hello\n", Files.readString(clone.resolve("README.md")));
        }

        Path shallow = tmp.resolve("shallow");
        git.ok(tmp, "clone", "--depth", "1", url(server, u.username(), "proto"), shallow.toString());
        assertEquals("1", git.ok(shallow, "rev-list", "--count", "HEAD"));
        assertEquals("true", git.ok(shallow, "rev-parse", "--is-shallow-repository"));

        git.ok(work, "commit", "-q", "--allow-empty", "-m", "third");
        git.ok(work, "push", url(server, u.username(), "proto"), "main");
        Path clone = tmp.resolve("clone-v2");
        git.ok(clone, "fetch", "origin");
        assertEquals(git.ok(work, "rev-parse", "HEAD"), git.ok(clone, "rev-parse", "origin/main"));
    }

    @Test
    void branchesAndTagsArePushedAndForcePushFollowsTheRepositorySetting(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = createRepo(u, "pushes", "private");
        GitClient git = git(u);
        String remote = url(server, u.username(), "pushes");
        Path work = git.newWorkingCopy(tmp.resolve("w"), "a.txt", "a\n");
        git.ok(work, "push", remote, "main");

        git.ok(work, "checkout", "-q", "-b", "feature");
        Files.writeString(work.resolve("b.txt"), "b\n");
        git.ok(work, "add", "b.txt");
        git.ok(work, "commit", "-q", "-m", "feature work");
        git.ok(work, "push", remote, "feature");
        git.ok(work, "tag", "-a", "v1.0", "-m", "release 1.0");
        git.ok(work, "push", remote, "v1.0");
        String remoteRefs = git.ok(tmp, "ls-remote", remote);
        assertTrue(remoteRefs.contains("refs/heads/feature"), remoteRefs);
        assertTrue(remoteRefs.contains("refs/tags/v1.0"), remoteRefs);
        Http.Reply branches = u.http().get("/api/repos/" + id + "/branches");
        assertEquals(2, branches.get("branches").size(), branches.body());

        // rewrite feature: allowed while the repository allows force pushes (the default) ...
        git.ok(work, "commit", "-q", "--amend", "-m", "feature work, amended");
        assertEquals(0, git.run(work, "push", "--force", remote, "feature").exit());
        // ... refused once the owner switches it off, and the branch keeps its commit
        assertEquals(
                200,
                u.http()
                        .patch("/api/repos/" + id, Map.of("allow_force_push", false))
                        .status());
        String before = git.ok(tmp, "ls-remote", remote, "refs/heads/feature").split("\t")[0];
        git.ok(work, "commit", "-q", "--amend", "-m", "feature work, amended twice");
        GitClient.Result refused = git.run(work, "push", "--force", remote, "feature");
        assertNotEquals(0, refused.exit(), refused.both());
        assertTrue(refused.both().contains("rejected"), refused.both());
        assertEquals(
                before, git.ok(tmp, "ls-remote", remote, "refs/heads/feature").split("\t")[0]);
        // deleting the default branch is refused whatever the setting
        GitClient.Result delete = git.run(work, "push", remote, ":main");
        assertNotEquals(0, delete.exit(), delete.both());
    }

    @Test
    void anonymousUsersClonePublicRepositoriesButNeedCredentialsForPrivateOnesAndEveryPush(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        createRepo(owner, "open", "public");
        createRepo(owner, "closed", "private");
        GitClient ownerGit = git(owner);
        Path work = ownerGit.newWorkingCopy(tmp.resolve("w"), "f.txt", "x\n");
        ownerGit.ok(work, "push", url(server, owner.username(), "open"), "main");
        ownerGit.ok(work, "push", url(server, owner.username(), "closed"), "main");

        GitClient anon = anonymous();
        assertEquals(
                0,
                anon.run(
                                tmp,
                                "clone",
                                url(server, owner.username(), "open"),
                                tmp.resolve("c1").toString())
                        .exit());
        GitClient.Result closed = anon.run(
                tmp,
                "clone",
                url(server, owner.username(), "closed"),
                tmp.resolve("c2").toString());
        assertNotEquals(0, closed.exit());
        assertEquals(
                401,
                status("GET", url(server, owner.username(), "closed") + "/info/refs?service=git-upload-pack", null));
        HttpResponse<String> challenge =
                raw("GET", url(server, owner.username(), "closed") + "/info/refs?service=git-upload-pack", null);
        assertEquals(
                "Basic realm=\"atrium\"",
                challenge.headers().firstValue("WWW-Authenticate").orElse(null));
        // a push without credentials is 401 even to a public repository
        assertEquals(
                401,
                status("GET", url(server, owner.username(), "open") + "/info/refs?service=git-receive-pack", null));
        assertNotEquals(
                0,
                anon.run(work, "push", url(server, owner.username(), "open"), "main:other")
                        .exit());
    }

    @Test
    void anotherPrincipalsTokenSeesNoPrivateRepositoryAndCannotPushToAPublicOne(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        createRepo(owner, "mine", "private");
        createRepo(owner, "shared", "public");
        GitClient ownerGit = git(owner);
        Path work = ownerGit.newWorkingCopy(tmp.resolve("w"), "f.txt", "x\n");
        ownerGit.ok(work, "push", url(server, owner.username(), "mine"), "main");
        ownerGit.ok(work, "push", url(server, owner.username(), "shared"), "main");

        String strangerToken = stranger.http().token();
        assertEquals(
                404,
                status(
                        "GET",
                        url(server, owner.username(), "mine") + "/info/refs?service=git-upload-pack",
                        strangerToken));
        assertEquals(
                404,
                status(
                        "GET",
                        url(server, owner.username(), "nothing-here") + "/info/refs?service=git-upload-pack",
                        strangerToken));
        assertEquals(
                403,
                status(
                        "GET",
                        url(server, owner.username(), "shared") + "/info/refs?service=git-receive-pack",
                        strangerToken));
        GitClient strangerGit = git(stranger);
        assertNotEquals(
                0,
                strangerGit
                        .run(
                                tmp,
                                "clone",
                                url(server, owner.username(), "mine"),
                                tmp.resolve("c").toString())
                        .exit());
        GitClient.Result push = strangerGit.run(work, "push", url(server, owner.username(), "shared"), "main:stolen");
        assertNotEquals(0, push.exit());
        assertTrue(push.both().contains("403"), push.both());
        assertEquals(
                0,
                strangerGit
                        .run(
                                tmp,
                                "clone",
                                url(server, owner.username(), "shared"),
                                tmp.resolve("c2").toString())
                        .exit());
        // a token without repos:write cannot push, one without repos:read cannot clone a private repository
        String readOnly = server.operator()
                .post("/admin/users/" + owner.username() + "/tokens", Map.of("scopes", "repos:read"))
                .get("token")
                .asText();
        String noRepos = server.operator()
                .post("/admin/users/" + owner.username() + "/tokens", Map.of("scopes", "threads:read"))
                .get("token")
                .asText();
        assertEquals(
                403,
                status("GET", url(server, owner.username(), "mine") + "/info/refs?service=git-receive-pack", readOnly));
        assertEquals(
                200,
                status("GET", url(server, owner.username(), "mine") + "/info/refs?service=git-upload-pack", readOnly));
        assertEquals(
                403,
                status("GET", url(server, owner.username(), "mine") + "/info/refs?service=git-upload-pack", noRepos));
    }

    @Test
    void malformedRequestsGetTheirOwnStatus(AtriumServer server) throws Exception {
        User u = server.newUser();
        createRepo(u, "edge", "public");
        String base = url(server, u.username(), "edge");
        assertEquals(403, status("GET", base + "/info/refs?service=git-evil-pack", null));
        assertEquals(403, status("GET", base + "/info/refs", null));
        assertEquals(404, status("GET", server.base() + "/git/" + u.username() + "/edge.git/objects/info/packs", null));
        assertEquals(
                404,
                status(
                        "GET",
                        base.replace("/edge.git", "/missing.git") + "/info/refs?service=git-upload-pack",
                        u.http().token()));
        assertEquals(
                401, status("GET", server.base() + "/git/nobody-at-all/x.git/info/refs?service=git-upload-pack", null));
        assertEquals(401, status("GET", base + "/info/refs?service=git-upload-pack", "atp_not-a-real-token"));
        // a body larger than the limit is refused before it is read
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port)) {
            s.setSoTimeout(10_000);
            String request = "POST /git/" + u.username() + "/edge.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer " + u.http().token()
                    + "\r\nContent-Type: application/x-git-receive-pack-request\r\n"
                    + "Content-Length: " + (3L << 30) + "\r\n\r\n0000";
            s.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String statusLine =
                    new java.io.BufferedReader(new java.io.InputStreamReader(s.getInputStream())).readLine();
            assertEquals("HTTP/1.1 413 Payload Too Large", statusLine);
        }
    }

    @Test
    void concurrentPushesToOneRepositoryLeaveConsistentRefs(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = createRepo(u, "race", "private");
        GitClient git = git(u);
        String remote = url(server, u.username(), "race");
        Path base = git.newWorkingCopy(tmp.resolve("base"), "seed.txt", "0\n");
        git.ok(base, "push", remote, "main");
        int n = 4;
        List<Path> copies = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            Path c = tmp.resolve("c" + i);
            git.ok(tmp, "clone", "-q", remote, c.toString());
            Files.writeString(c.resolve("file" + i + ".txt"), ("work " + i + "\n").repeat(2000));
            git.ok(c, "add", "-A");
            git.ok(c, "commit", "-q", "-m", "work " + i);
            copies.add(c);
        }
        List<CompletableFuture<GitClient.Result>> pushes = copies.stream()
                .map(c -> CompletableFuture.supplyAsync(() -> git.run(c, "push", remote, "main")))
                .toList();
        int succeeded = 0;
        for (CompletableFuture<GitClient.Result> p : pushes) {
            GitClient.Result r = p.get();
            if (r.exit() == 0) {
                succeeded++;
            } else {
                assertTrue(
                        r.both().contains("rejected")
                                || r.both().contains("failed to lock")
                                || r.both().contains("409"),
                        r.both());
            }
        }
        assertTrue(succeeded >= 1, "at least one push wins");
        Path check = tmp.resolve("check");
        git.ok(tmp, "clone", "-q", "--mirror", remote, check.toString());
        git.ok(check, "fsck", "--strict");
        String head = git.ok(check, "rev-parse", "refs/heads/main");
        assertTrue(
                copies.stream().anyMatch(c -> head.equals(git.ok(c, "rev-parse", "HEAD"))),
                "main is one of the pushed commits");
        Path onDisk = server.data.resolve("git").resolve(id + ".git");
        git.ok(onDisk, "fsck", "--strict");
    }

    @Test
    void garbagePktLinesToUploadPackAre400NotAnInternalError(AtriumServer server) throws Exception {
        User u = server.newUser();
        createRepo(u, "garbage", "private");
        GitClient git = git(u);
        Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "hello\n");
        git.ok(work, "push", url(server, u.username(), "garbage"), "main");
        // a first length that is not hex is refused before JGit; a hex length JGit cannot parse is refused by it
        for (String body : List.of("zzzzgarbage0000", "0003", "0002xx", "0001")) {
            HttpResponse<String> r = post(
                    url(server, u.username(), "garbage") + "/git-upload-pack",
                    u.http().token(),
                    "application/x-git-upload-pack-request",
                    body);
            assertEquals(400, r.statusCode(), body + " -> " + r.body());
            assertTrue(
                    r.body()
                            .contains(
                                    body.startsWith("z")
                                            ? "not a Git pkt-line stream"
                                            : "not a valid upload-pack request"),
                    r.body());
        }
    }

    @Test
    void aReceivePackBodyThatIsNotPktLinesIs400NotAnInternalError(AtriumServer server) throws Exception {
        User u = server.newUser();
        createRepo(u, "garbage-push", "private");
        for (String body : List.of("zzzzgarbage0000", "gggg", "", "0")) {
            HttpResponse<String> r = post(
                    url(server, u.username(), "garbage-push") + "/git-receive-pack",
                    u.http().token(),
                    "application/x-git-receive-pack-request",
                    body);
            assertEquals(400, r.statusCode(), body + " -> " + r.body());
            assertTrue(r.body().contains("not a Git pkt-line stream"), r.body());
        }
        // a real push still works through the re-readable body
        GitClient git = git(u);
        Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "hello\n");
        git.ok(work, "push", url(server, u.username(), "garbage-push"), "main");
    }

    @Test
    void aNonGitContentTypeIs415InGitsTermsNotTheContainersPage(AtriumServer server) throws Exception {
        User u = server.newUser();
        createRepo(u, "typed", "private");
        for (String service : List.of("git-upload-pack", "git-receive-pack")) {
            for (String type : List.of("application/json", "text/plain")) {
                HttpResponse<String> r = post(
                        url(server, u.username(), "typed") + "/" + service,
                        u.http().token(),
                        type,
                        "0000");
                assertEquals(415, r.statusCode(), r.body());
                assertTrue(
                        r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"),
                        r.headers().toString());
                assertTrue(r.body().contains("application/x-" + service + "-request"), r.body());
            }
        }
    }

    @Test
    void aQueryThatIsNotUtf8Is400NotAContainerError(AtriumServer server) throws Exception {
        User u = server.newUser();
        createRepo(u, "query", "public");
        String base = url(server, u.username(), "query");
        for (String query : List.of("service=%ff", "service=git-upload-pack&x=%ff", "x=%c3", "service=%ed%a0%80")) {
            HttpResponse<String> r =
                    raw("GET", base + "/info/refs?" + query, u.http().token());
            assertEquals(400, r.statusCode(), query + " -> " + r.body());
            assertTrue(r.body().contains("query string is not valid"), r.body());
        }
        assertEquals(200, status("GET", base + "/info/refs?service=git-upload-pack", null));
    }

    static HttpResponse<String> post(String url, String token, String type, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", type)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        b.header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(("x:" + token).getBytes()));
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .build()
                .send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static int status(String method, String url, String token) throws Exception {
        return raw(method, url, token).statusCode();
    }

    static HttpResponse<String> raw(String method, String url, String token) throws Exception {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(url)).method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            b.header(
                    "Authorization",
                    "Basic " + java.util.Base64.getEncoder().encodeToString(("x:" + token).getBytes()));
        }
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
