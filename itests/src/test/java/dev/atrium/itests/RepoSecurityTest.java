package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13, the Git side: names and objects that enter a repository by any way (API routes, bundle import,
 * remote import, JSON commits, archives, pushes) cannot reach another repository or the data directory, cannot
 * make a tree that unpacks outside itself, and bad input of this kind is a 400 with a message, never a 500.
 */
@SharedServer
class RepoSecurityTest {

    @TempDir
    Path tmp;

    // ----------------------------------------------------------------------------------------------- helpers

    private static String repo(User u, String name) {
        Http.Reply r = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", name));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    private static String commitFile(User u, String repoId, String branch, String path, String content) {
        Http.Reply r = u.http()
                .post(
                        "/api/repos/" + repoId + "/commit",
                        Map.of(
                                "branch",
                                branch,
                                "message",
                                "add " + path,
                                "changes",
                                List.of(Map.of("path", path, "content", content))));
        assertEquals(201, r.status(), r.body());
        return r.get("commit").get("sha").asText();
    }

    private static List<String> branches(User u, String repoId) {
        List<String> names = new ArrayList<>();
        Http.Reply r = u.http().get("/api/repos/" + repoId + "/branches");
        assertEquals(200, r.status(), r.body());
        r.get("branches").forEach(b -> names.add(b.get("name").asText()));
        return names;
    }

    /** A request written to the socket as is: no client normalises {@code ..} segments away. */
    private static RawHttp.Response raw(AtriumServer server, String method, String target, String token)
            throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write((method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + server.port
                            + "\r\nAuthorization: Bearer " + token
                            + "\r\nAccept: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            return RawHttp.read(s.getInputStream());
        }
    }

    private static JsonNode json(RawHttp.Response r) throws IOException {
        return Http.JSON.readTree(r.body());
    }

    /** A spec error body with {@code status}: {"error":{"code","message"}}. */
    private static void assertError(int status, Http.Reply r, String what) {
        assertEquals(status, r.status(), what + ": " + r.body());
        assertTrue(
                r.json() != null
                        && r.json().path("error").path("code").isTextual()
                        && r.json().path("error").path("message").isTextual(),
                what + ": not a spec error body: " + r.body());
    }

    private Http.Reply upload(User u, String repoId, String contentType, byte[] body) {
        return u.http().send("POST", "/api/repos/" + repoId + "/import", body, contentType);
    }

    private GitClient git() {
        return GitClient.anonymous(tmp.resolve("home"));
    }

    /** A Git bundle of a one-commit repository, its refs renamed as a hostile client would write them. */
    private byte[] bundleWithRefs(String dirName, List<String> refNames) throws IOException {
        GitClient git = git();
        Path work = git.newWorkingCopy(tmp.resolve(dirName), "README.md", "hello\n");
        git.ok(work, "bundle", "create", "-q", "b.bundle", "main");
        byte[] bundle = Files.readAllBytes(work.resolve("b.bundle"));
        String sha = git.ok(work, "rev-parse", "main");
        int headerEnd = indexOf(bundle, "\n\n".getBytes(StandardCharsets.US_ASCII)) + 2;
        StringBuilder header = new StringBuilder("# v2 git bundle\n");
        for (String ref : refNames) {
            header.append(sha).append(' ').append(ref).append('\n');
        }
        header.append('\n');
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(header.toString().getBytes(StandardCharsets.UTF_8));
        out.write(bundle, headerEnd, bundle.length - headerEnd);
        return out.toByteArray();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }

    /** A commit whose root tree has an entry named {@code name} (a directory holding evil.txt), made with git's --literally. */
    private String commitWithEntry(GitClient git, Path work, String name) throws IOException {
        Files.writeString(work.resolve("evil-content"), "evil\n");
        String blob = git.ok(work, "hash-object", "-w", "evil-content");
        Path innerFile = work.resolve("inner.tree");
        Files.write(innerFile, treeEntry("100644", "evil.txt", blob));
        String inner = git.ok(work, "hash-object", "--literally", "-t", "tree", "-w", innerFile.toString());
        String readme = git.ok(work, "rev-parse", "HEAD:README.md");
        ByteArrayOutputStream root = new ByteArrayOutputStream();
        // git sorts tree entries by name; both names here sort before README.md
        root.write(treeEntry("40000", name, inner));
        root.write(treeEntry("100644", "README.md", readme));
        Path rootFile = work.resolve("root.tree");
        Files.write(rootFile, root.toByteArray());
        String tree = git.ok(work, "hash-object", "--literally", "-t", "tree", "-w", rootFile.toString());
        String commit = git.ok(work, "commit-tree", tree, "-p", "HEAD", "-m", "entry " + name);
        git.ok(work, "update-ref", "refs/heads/main", commit);
        return commit;
    }

    private static byte[] treeEntry(String mode, String name, String sha) {
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        e.writeBytes((mode + " " + name + "\0").getBytes(StandardCharsets.UTF_8));
        e.writeBytes(HexFormat.of().parseHex(sha));
        return e.toByteArray();
    }

    // ------------------------------------------------------------------------------- 1: branch delete traversal

    @Test
    void deletingABranchByATraversalPathCannotReachAnotherPrincipalsRepository(AtriumServer server) throws IOException {
        User victim = server.newUser();
        User attacker = server.newUser();
        String victimRepo = repo(victim, "victim");
        commitFile(victim, victimRepo, "main", "README.md", "mine\n");
        commitFile(victim, victimRepo, "keep", "README.md", "mine too\n");
        String own = repo(attacker, "own");
        commitFile(attacker, own, "main", "a.txt", "a\n");

        for (String target : List.of(
                "../../../" + victimRepo + ".git/refs/heads/main",
                "../../../" + victimRepo + ".git/refs/heads/keep",
                "../../../" + victimRepo + ".git/config",
                "../" + "HEAD",
                "refs/../../x")) {
            RawHttp.Response r = raw(
                    server,
                    "DELETE",
                    "/api/repos/" + own + "/branches/" + target,
                    attacker.http().token());
            assertTrue(
                    r.status() == 400 || r.status() == 404,
                    target + ": " + r.status() + " " + new String(r.body(), StandardCharsets.UTF_8));
            assertTrue(json(r).path("error").path("message").isTextual(), target + ": not a spec error body");
        }
        assertEquals(
                List.of("keep", "main"),
                branches(victim, victimRepo).stream().sorted().toList(),
                "the victim's branches are all there");
        assertEquals(List.of("main"), branches(attacker, own));
        Http.Reply dotDot = attacker.http().delete("/api/repos/" + own + "/branches/a..b");
        assertError(400, dotDot, "a branch name with ..");
    }

    // ------------------------------------------------------------------------- 2: ref names of bundles, remotes

    @Test
    void aBundleWithATraversalRefNameIsRefusedAndWritesNothingAnywhere(AtriumServer server) throws IOException {
        User victim = server.newUser();
        User attacker = server.newUser();
        String victimRepo = repo(victim, "target");
        commitFile(victim, victimRepo, "main", "README.md", "victim\n");
        String own = repo(attacker, "carrier");
        byte[] bundle = bundleWithRefs(
                "bundle-traversal",
                List.of(
                        "refs/heads/main",
                        "refs/heads/../../../" + victimRepo + ".git/refs/heads/planted",
                        "refs/tags/../../../../planted-file"));

        Http.Reply r = upload(attacker, own, "application/x-git-bundle", bundle);
        assertError(400, r, "a bundle with a traversal ref");
        assertTrue(r.json().path("error").path("message").asText().contains(".."), r.body());
        assertEquals(List.of("main"), branches(victim, victimRepo), "nothing was planted in the victim's repository");
        assertFalse(Files.exists(server.data.resolve("git").resolve(victimRepo + ".git/refs/heads/planted")));
        assertFalse(Files.exists(server.data.resolve("planted-file")));
        assertFalse(Files.exists(server.data.resolve("git").resolve("planted-file")));
        assertEquals(List.of(), branches(attacker, own), "the bundle was refused whole");
        assertEquals(
                200,
                victim.http().get("/api/repos/" + victimRepo + "/tree/main").status());
    }

    @Test
    void aHostileRemoteAdvertisingATraversalRefIsRefusedAndWritesNothingAnywhere(AtriumServer server) throws Exception {
        User victim = server.newUser();
        User attacker = server.newUser();
        String victimRepo = repo(victim, "remote-target");
        commitFile(victim, victimRepo, "main", "README.md", "victim\n");

        GitClient git = git();
        Path work = git.newWorkingCopy(tmp.resolve("hostile-work"), "README.md", "from the hostile remote\n");
        Path bare = tmp.resolve("hostile.git");
        git.ok(tmp, "clone", "-q", "--bare", work.toString(), bare.toString());
        String sha = git.ok(work, "rev-parse", "main");
        String planted = "refs/heads/../../../" + victimRepo + ".git/refs/heads/planted";
        HttpServer remote =
                hostileRemote(bare, List.of(sha + " " + planted, sha + " refs/heads/x/../../../../../planted-file"));
        try {
            String url = "http://127.0.0.1:" + remote.getAddress().getPort() + "/hostile.git";
            Http.Reply r = attacker.http()
                    .post(
                            "/api/repos/import-external",
                            Map.of("url", url, "space_id", attacker.defaultSpaceId(), "name", "copy"));
            assertError(400, r, "a remote advertising a traversal ref");
            assertTrue(r.json().path("error").path("message").asText().contains(".."), r.body());
        } finally {
            remote.stop(0);
        }
        assertEquals(List.of("main"), branches(victim, victimRepo), "nothing was planted in the victim's repository");
        assertFalse(Files.exists(server.data.resolve("git").resolve(victimRepo + ".git/refs/heads/planted")));
        assertFalse(Files.exists(server.data.resolve("planted-file")));
        assertEquals(
                0,
                attacker.http()
                        .get("/api/spaces/" + attacker.defaultSpaceId() + "/repos")
                        .get("repositories")
                        .size(),
                "the failed import left no repository behind");
    }

    @Test
    void aRemoteWhoseHistoryHasADotDotTreeEntryIsRefusedAndLeavesNoRepository(AtriumServer server) throws Exception {
        User u = server.newUser();
        GitClient git = git();
        Path work = git.newWorkingCopy(tmp.resolve("slip-remote-work"), "README.md", "hello\n");
        commitWithEntry(git, work, "..");
        Path bare = tmp.resolve("slip-remote.git");
        git.ok(tmp, "clone", "-q", "--bare", "--no-local", work.toString(), bare.toString());
        HttpServer remote = hostileRemote(bare, List.of());
        try {
            String url = "http://127.0.0.1:" + remote.getAddress().getPort() + "/hostile.git";
            Http.Reply r = u.http()
                    .post(
                            "/api/repos/import-external",
                            Map.of("url", url, "space_id", u.defaultSpaceId(), "name", "slip"));
            assertError(400, r, "a remote whose tree has a '..' entry");
        } finally {
            remote.stop(0);
        }
        assertEquals(
                0,
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/repos")
                        .get("repositories")
                        .size());
    }

    /**
     * Git smart HTTP (protocol v0) over {@code bare}, served by the real {@code git upload-pack}, with
     * {@code extraRefs} ("sha name") added to the ref advertisement as a hostile server would.
     */
    private static HttpServer hostileRemote(Path bare, List<String> extraRefs) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/hostile.git/info/refs", exchange -> {
            byte[] real = run(
                    List.of("git", "upload-pack", "--stateless-rpc", "--advertise-refs", bare.toString()), new byte[0]);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(pkt("# service=git-upload-pack\n"));
            out.writeBytes("0000".getBytes(StandardCharsets.US_ASCII));
            out.write(real, 0, real.length - 4); // without its closing flush
            for (String ref : extraRefs) {
                out.writeBytes(pkt(ref + "\n"));
            }
            out.writeBytes("0000".getBytes(StandardCharsets.US_ASCII));
            exchange.getResponseHeaders().add("Content-Type", "application/x-git-upload-pack-advertisement");
            exchange.getResponseHeaders().add("Cache-Control", "no-cache");
            exchange.sendResponseHeaders(200, out.size());
            exchange.getResponseBody().write(out.toByteArray());
            exchange.close();
        });
        http.createContext("/hostile.git/git-upload-pack", exchange -> {
            InputStream in = exchange.getRequestBody();
            if ("gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
                in = new GZIPInputStream(in);
            }
            byte[] result = run(List.of("git", "upload-pack", "--stateless-rpc", bare.toString()), in.readAllBytes());
            exchange.getResponseHeaders().add("Content-Type", "application/x-git-upload-pack-result");
            exchange.sendResponseHeaders(200, result.length);
            exchange.getResponseBody().write(result);
            exchange.close();
        });
        http.start();
        return http;
    }

    private static byte[] pkt(String line) {
        byte[] data = line.getBytes(StandardCharsets.UTF_8);
        return (String.format("%04x", data.length + 4) + line).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] run(List<String> command, byte[] input) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        pb.environment().remove("GIT_PROTOCOL");
        Process p = pb.start();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
            try (InputStream s = p.getInputStream()) {
                return s.readAllBytes();
            } catch (IOException e) {
                return new byte[0];
            }
        });
        try (OutputStream o = p.getOutputStream()) {
            o.write(input);
        }
        return out.join();
    }

    // ------------------------------------------------------------------------------------------- 3: zip-slip

    @Test
    void aBundleWhoseTreeHasADotDotEntryIsRefusedSoNoExportCanEmitIt(AtriumServer server) throws IOException {
        User u = server.newUser();
        String id = repo(u, "zipslip");
        GitClient git = git();
        Path work = git.newWorkingCopy(tmp.resolve("zipslip-work"), "README.md", "hello\n");
        commitWithEntry(git, work, "..");
        git.ok(work, "bundle", "create", "-q", "b.bundle", "main");

        Http.Reply r = upload(u, id, "application/x-git-bundle", Files.readAllBytes(work.resolve("b.bundle")));
        try {
            assertError(400, r, "a bundle with a '..' tree entry");
        } finally {
            if (r.status() == 200) {
                List<String> names = zipNames(bytes(u, "/api/repos/" + id + "/export?format=zip"));
                assertFalse(names.stream().anyMatch(n -> n.contains("..")), "the export emitted " + names);
            }
        }
        assertEquals(List.of(), branches(u, id));
    }

    private static byte[] bytes(User u, String path) {
        try {
            return java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(
                                            java.net.URI.create(u.http().base() + path))
                                    .header(
                                            "Authorization",
                                            "Bearer " + u.http().token())
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofByteArray())
                    .body();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void historyStoredBeforeTheChecksIsNeitherExportedNorForked(AtriumServer server) throws IOException {
        User u = server.newUser();
        String id = repo(u, "legacy");
        GitClient git = git();
        Path work = git.newWorkingCopy(tmp.resolve("legacy-work"), "README.md", "hello\n");
        commitWithEntry(git, work, "..");
        // written straight into the data directory, as history from before the checks would be
        Path bare = server.data.resolve("git").resolve(id + ".git");
        git.ok(bare, "fetch", "-q", work.toString(), "+main:refs/heads/main");
        List<String> cleanup = new ArrayList<>(List.of(id));
        try {
            for (String format : List.of("zip", "tar.gz")) {
                Http.Reply export = u.http().get("/api/repos/" + id + "/export?format=" + format);
                assertError(409, export, "an export of a tree with a '..' entry as " + format);
            }
            Http.Reply fork = u.http().post("/api/repos/" + id + "/fork", Map.of("name", "legacy-fork"));
            if (fork.status() == 201) {
                cleanup.add(fork.get("repository").get("id").asText());
            }
            assertError(409, fork, "a fork of history with a '..' entry");
            assertEquals(
                    1,
                    u.http()
                            .get("/api/spaces/" + u.defaultSpaceId() + "/repos")
                            .get("repositories")
                            .size(),
                    "the failed fork left no repository behind");
        } finally {
            // the shared server's repositories must pass git fsck at the end of the suite (RepositoriesFsckTest)
            cleanup.forEach(r -> u.http().delete("/api/repos/" + r));
        }
    }

    private static List<String> zipNames(byte[] zip) throws IOException {
        List<String> names = new ArrayList<>();
        try (ZipInputStream in = new ZipInputStream(new java.io.ByteArrayInputStream(zip))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                names.add(e.getName());
            }
        }
        return names;
    }

    @Test
    void aPushWhoseTreeHidesDotGitBehindAnHfsIgnorableCharacterIsRefused(AtriumServer server) throws IOException {
        User u = server.newUser();
        repo(u, "hfs");
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("hfs-work"), "README.md", "hello\n");
        commitWithEntry(git, work, ".g\u200Cit");
        GitClient.Result push = git.run(work, "push", server.base() + "/git/" + u.username() + "/hfs.git", "main");
        assertTrue(push.exit() != 0, "the push was refused: " + push.both());
    }

    // -------------------------------------------------------------------------------------- 5: 400, not 500

    @Test
    void pathsJGitWouldRefuseInAJsonCommitAreABadRequestSayingWhy(AtriumServer server) {
        User u = server.newUser();
        String id = repo(u, "paths");
        commitFile(u, id, "main", "README.md", "x\n");
        for (String bad : List.of(
                "/etc/passwd",
                ".GIT/config",
                ".git./x",
                "GIT~1/x",
                "sub/.git",
                "sub/.git/hooks/x",
                "a/../b",
                "lone\uD800.txt")) {
            Http.Reply r = u.http()
                    .post(
                            "/api/repos/" + id + "/commit",
                            Map.of("message", "m", "changes", List.of(Map.of("path", bad, "content", "x"))));
            assertError(400, r, bad);
            assertTrue(r.json().path("error").path("message").asText().length() > 10, bad + ": " + r.body());
        }
        assertEquals(
                1, u.http().get("/api/repos/" + id + "/commits").get("commits").size(), "nothing was committed");
    }

    @Test
    void archivePathsJGitWouldRefuseAndDamagedArchivesAreABadRequest(AtriumServer server) throws IOException {
        User u = server.newUser();
        String id = repo(u, "archives");
        for (String bad : List.of("/etc/passwd", ".GIT/config", ".git./x", "GIT~1/x", "sub/.git")) {
            assertError(400, upload(u, id, "application/zip", zip(bad, "x", "ok.txt", "y")), bad);
        }
        assertError(400, upload(u, id, "application/gzip", "plain text, not gzip".getBytes()), "not gzip");
        byte[] noise = new byte[10_000];
        new java.util.Random(13).nextBytes(noise);
        byte[] zip = zip("a.txt", new String(noise, StandardCharsets.ISO_8859_1));
        assertError(400, upload(u, id, "application/zip", java.util.Arrays.copyOf(zip, 200)), "a truncated zip");
        byte[] gz = gzip("x".repeat(5000).getBytes());
        assertError(
                400, upload(u, id, "application/gzip", java.util.Arrays.copyOf(gz, gz.length / 2)), "a truncated gzip");
        assertEquals(List.of(), branches(u, id));
    }

    private static byte[] zip(String... nameAndContent) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (int i = 0; i < nameAndContent.length; i += 2) {
                zip.putNextEntry(new ZipEntry(nameAndContent[i]));
                zip.write(nameAndContent[i + 1].getBytes());
                zip.closeEntry();
            }
        }
        return bytes.toByteArray();
    }

    private static byte[] gzip(byte[] data) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gz = new java.util.zip.GZIPOutputStream(bytes)) {
            gz.write(data);
        }
        return bytes.toByteArray();
    }

    @Test
    void aLoneSurrogateInABranchNameIsABadRequestAndNeverStoredAsAQuestionMark(AtriumServer server) {
        User u = server.newUser();
        String id = repo(u, "surrogates");
        commitFile(u, id, "main", "README.md", "x\n");
        Http.Reply branch = u.http().post("/api/repos/" + id + "/branches", "{\"name\":\"b\\ud800\"}");
        assertError(400, branch, "a lone surrogate in a new branch");
        Http.Reply commit = u.http()
                .post(
                        "/api/repos/" + id + "/commit",
                        "{\"branch\":\"c\\udc00\",\"message\":\"m\",\"changes\":[{\"path\":\"f.txt\",\"content\":\"x\"}]}");
        assertError(400, commit, "a lone surrogate in a commit's branch");
        Http.Reply path = u.http()
                .post(
                        "/api/repos/" + id + "/commit",
                        "{\"message\":\"m\",\"changes\":[{\"path\":\"f\\ud800.txt\",\"content\":\"x\"}]}");
        assertError(400, path, "a lone surrogate in a path");
        assertEquals(List.of("main"), branches(u, id));
        assertEquals(200, u.http().get("/api/repos/" + id + "/tree/main").status());
        u.http()
                .get("/api/repos/" + id + "/tree/main")
                .get("entries")
                .forEach(e -> assertFalse(e.get("name").asText().contains("?"), "stored as '?': " + e));
    }

    // -------------------------------------------------------------------------------------------- 6: reflog

    @Test
    void forcePushedContentIsNotReadableThroughTheReflogOrItsCommitId(AtriumServer server) throws IOException {
        User u = server.newUser();
        String id = repo(u, "rewritten");
        assertEquals(
                200,
                u.http()
                        .patch("/api/repos/" + id, Map.of("allow_force_push", true))
                        .status());
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        String remote = server.base() + "/git/" + u.username() + "/rewritten.git";
        Path work = git.newWorkingCopy(
                tmp.resolve("rewritten-work"), "README.md", "public\n", "secret.txt", "password=hunter2\n");
        git.ok(work, "push", "-q", remote, "main");
        String leaked = git.ok(work, "rev-parse", "HEAD");
        git.ok(work, "rm", "-q", "secret.txt");
        git.ok(work, "commit", "-q", "--amend", "-m", "initial, without the secret");
        git.ok(work, "push", "-q", "--force", remote, "main");
        String current = git.ok(work, "rev-parse", "HEAD");

        for (String rev : List.of(
                "main@%7B1%7D", "%40%7B-1%7D", "main@%7B2026-01-01%7D", "main~1", "main%5E", "main%5E%7Bcommit%7D")) {
            Http.Reply r = u.http().get("/api/repos/" + id + "/blob/" + rev + "/secret.txt");
            assertError(400, r, rev);
        }
        for (String rev : List.of(leaked, leaked.substring(0, 12))) {
            Http.Reply r = u.http().get("/api/repos/" + id + "/blob/" + rev + "/secret.txt");
            assertError(404, r, "the unreachable commit " + rev);
            assertEquals(404, u.http().get("/api/repos/" + id + "/tree/" + rev).status());
            assertEquals(
                    404,
                    u.http().get("/api/repos/" + id + "/commits?ref=" + rev).status());
        }
        Http.Reply missing = u.http().get("/api/repos/" + id + "/blob/" + "0".repeat(40) + "/secret.txt");
        Http.Reply unreachable = u.http().get("/api/repos/" + id + "/blob/" + leaked + "/secret.txt");
        assertEquals(missing.errorCode(), unreachable.errorCode(), "unreachable looks like missing");
        assertEquals(
                200,
                u.http()
                        .get("/api/repos/" + id + "/blob/" + current + "/README.md")
                        .status(),
                "a reachable commit id works");
        assertEquals(
                200,
                u.http()
                        .get("/api/repos/" + id + "/blob/" + current.substring(0, 10) + "/README.md")
                        .status());
        assertEquals(
                200, u.http().get("/api/repos/" + id + "/blob/main/README.md").status());
    }

    // --------------------------------------------------------------------------- 10: no server paths in errors

    @Test
    void aBrokenBundleIsABadRequestThatDoesNotShowServerPaths(AtriumServer server) throws IOException {
        User u = server.newUser();
        String id = repo(u, "broken-bundle");
        byte[] good = bundleWithRefs("broken-bundle-work", List.of("refs/heads/main"));
        byte[] broken = java.util.Arrays.copyOf(good, good.length - 30);
        Http.Reply r = upload(u, id, "application/x-git-bundle", broken);
        assertError(400, r, "a truncated bundle");
        String message = r.json().path("error").path("message").asText();
        assertFalse(
                message.contains("/tmp")
                        || message.contains("atrium-import")
                        || message.contains(server.data.toString())
                        || message.contains(System.getProperty("java.io.tmpdir")),
                "the message shows a server path: " + message);
        byte[] garbage = "# v2 git bundle\nnot a ref line\n\nPACK".getBytes(StandardCharsets.US_ASCII);
        Http.Reply r2 = upload(u, id, "application/x-git-bundle", garbage);
        assertError(400, r2, "a garbage bundle");
        String m2 = r2.json().path("error").path("message").asText();
        assertFalse(m2.contains("/tmp") || m2.contains("atrium-import"), "the message shows a server path: " + m2);
    }

    /** Used by {@link RepositoriesFsckTest}: every bare repository of a data directory. */
    static List<Path> bareRepositories(Path data) throws IOException {
        Path git = data.resolve("git");
        if (!Files.isDirectory(git)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(git)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".git") && Files.isDirectory(p))
                    .sorted()
                    .toList();
        }
    }
}
