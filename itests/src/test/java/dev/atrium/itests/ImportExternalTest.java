package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /api/repos/import-external} against Git repositories served on loopback (the test server allows
 * loopback egress; production does not), with redirects served by the test itself.
 */
@SharedServer
class ImportExternalTest {

    @TempDir
    Path tmp;

    /** A repository of {@code owner} with {@code files} one-line files in one commit, pushed with the real git. */
    private String seed(AtriumServer server, User owner, String name, String visibility, int files) throws Exception {
        Http.Reply r = owner.http()
                .post(
                        "/api/spaces/" + owner.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility));
        assertEquals(201, r.status(), r.body());
        GitClient git = new GitClient(tmp.resolve("home"), owner.http().token());
        Path work = Files.createDirectories(tmp.resolve("seed-" + name));
        git.ok(work, "init", "-q", "-b", "main");
        for (int i = 0; i < files; i++) {
            Files.writeString(work.resolve("file" + i + ".txt"), "content " + i + "\n");
        }
        git.ok(work, "add", "-A");
        git.ok(work, "commit", "-q", "-m", "seed");
        git.ok(work, "checkout", "-q", "-b", "dev");
        git.ok(work, "commit", "-q", "--allow-empty", "-m", "dev work");
        git.ok(work, "push", "-q", server.base() + "/git/" + owner.username() + "/" + name + ".git", "main", "dev");
        return r.get("repository").get("id").asText();
    }

    private static Map<String, Object> body(String url, String spaceId, Object... more) {
        Map<String, Object> m = new HashMap<>();
        m.put("url", url);
        m.put("space_id", spaceId);
        for (int i = 0; i < more.length; i += 2) {
            m.put((String) more[i], more[i + 1]);
        }
        return m;
    }

    @Test
    void aPublicRepositoryIsImportedWithAllItsBranches(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User importer = server.newUser();
        seed(server, owner, "upstream", "public", 3);
        String url = server.base() + "/git/" + owner.username() + "/upstream.git";
        Http.Reply r = importer.http()
                .post(
                        "/api/repos/import-external",
                        body(url, importer.defaultSpaceId(), "description", "a copy", "visibility", "public"));
        assertEquals(201, r.status(), r.body());
        assertFalse(r.get("partial").asBoolean());
        String id = r.get("repository").get("id").asText();
        assertEquals("upstream", r.get("repository").get("name").asText());
        assertEquals("a copy", r.get("repository").get("description").asText());
        assertEquals("main", r.get("repository").get("default_branch").asText());
        List<String> branches = new ArrayList<>();
        importer.http()
                .get("/api/repos/" + id + "/branches")
                .get("branches")
                .forEach(b -> branches.add(b.get("name").asText()));
        assertEquals(List.of("dev", "main"), branches.stream().sorted().toList());
        assertEquals(
                "content 2\n",
                importer.http()
                        .get("/api/repos/" + id + "/blob/main/file2.txt")
                        .get("content")
                        .asText());
        assertEquals(
                409,
                importer.http()
                        .post("/api/repos/import-external", body(url, importer.defaultSpaceId()))
                        .status(),
                "the name is taken now");
    }

    @Test
    void aPrivateRepositoryNeedsTheTokenOfSomeoneWhoMayReadIt(AtriumServer server) throws Exception {
        User owner = server.newUser();
        seed(server, owner, "closed", "private", 1);
        String url = server.base() + "/git/" + owner.username() + "/closed.git";
        Http.Reply refused =
                owner.http().post("/api/repos/import-external", body(url, owner.defaultSpaceId(), "name", "copy1"));
        assertEquals(400, refused.status(), refused.body());
        assertTrue(refused.json().path("error").path("message").asText().contains("401"), refused.body());
        assertEquals(
                0,
                owner.http()
                                .get("/api/spaces/" + owner.defaultSpaceId() + "/repos")
                                .get("repositories")
                                .size()
                        - 1,
                "the failed import left no repository behind");
        Http.Reply ok = owner.http()
                .post(
                        "/api/repos/import-external",
                        body(
                                url,
                                owner.defaultSpaceId(),
                                "name",
                                "copy2",
                                "auth",
                                Map.of("token", owner.http().token())));
        assertEquals(201, ok.status(), ok.body());
    }

    @Test
    void everyTargetAndEveryRedirectPassesTheEgressGuard(AtriumServer server) throws Exception {
        User owner = server.newUser();
        seed(server, owner, "target", "public", 1);
        String real = server.base() + "/git/" + owner.username() + "/target.git";
        HttpServer redirector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        Map<String, String> targets = Map.of(
                "/metadata", "http://169.254.169.254/latest",
                "/private", "http://10.0.0.7/repo.git",
                "/internal", "http://git.corp.internal/repo.git",
                "/octal", "http://0177.0.0.1:" + server.port + "/git/x.git",
                "/ipv6", "http://[fd00::5]/repo.git",
                "/mapped", "http://[::ffff:192.168.1.1]/repo.git",
                "/scheme", "file:///etc/passwd",
                "/ok", real);
        redirector.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            String key = path.substring(0, path.indexOf('/', 1));
            String to = targets.get(key);
            exchange.getResponseHeaders().add("Location", to + "/info/refs?service=git-upload-pack");
            exchange.sendResponseHeaders(302, -1);
            exchange.close();
        });
        redirector.start();
        try {
            String via = "http://127.0.0.1:" + redirector.getAddress().getPort();
            for (String refused :
                    List.of("/metadata", "/private", "/internal", "/octal", "/ipv6", "/mapped", "/scheme")) {
                Http.Reply r = owner.http()
                        .post(
                                "/api/repos/import-external",
                                body(
                                        via + refused + "/repo.git",
                                        owner.defaultSpaceId(),
                                        "name",
                                        "r" + refused.substring(1)));
                assertEquals(400, r.status(), refused + ": " + r.body());
                assertEquals("BAD_REQUEST", r.errorCode());
            }
            Http.Reply followed = owner.http()
                    .post(
                            "/api/repos/import-external",
                            body(via + "/ok/repo.git", owner.defaultSpaceId(), "name", "followed"));
            assertEquals(201, followed.status(), followed.body());
            assertEquals(real, followed.get("source_url").asText());
        } finally {
            redirector.stop(0);
        }
        for (String direct : List.of(
                "http://169.254.169.254/repo.git",
                "http://192.168.0.1/r.git",
                "http://printer.local/r.git",
                "ftp://example.org/r.git",
                "http://[::1]:1/x.git".replace("::1", "fe80::1"),
                "not a url")) {
            Http.Reply r = owner.http()
                    .post("/api/repos/import-external", body(direct, owner.defaultSpaceId(), "name", "direct"));
            assertEquals(400, r.status(), direct + ": " + r.body());
        }
        assertEquals(
                400,
                owner.http()
                        .post("/api/repos/import-external", Map.of("space_id", owner.defaultSpaceId()))
                        .status());
        User stranger = server.newUser();
        assertEquals(
                404,
                stranger.http()
                        .post("/api/repos/import-external", body(real, owner.defaultSpaceId(), "name", "x"))
                        .status());
    }

    @Test
    void aRepositoryOverTheLimitsFallsBackToABloblessFetchWhenOfferedElseToItsCodeHostsArchive(AtriumServer server)
            throws Throwable {
        User owner = server.newUser();
        String offered = seed(server, owner, "big", "public", 40);
        String plain = seed(server, owner, "bigplain", "public", 40);
        // the remote of the second one does not advertise filter / allow-reachable-sha1-in-want
        Path config = server.data.resolve("git").resolve(plain + ".git").resolve("config");
        Files.writeString(
                config,
                Files.readString(config)
                        .replace("allowFilter = true", "allowFilter = false")
                        .replace("allowReachableSHA1InWant = true", "allowReachableSHA1InWant = false"));
        // a code host's tarballs of the shared server's repositories ({owner} is the path before the name, git/<user>
        // here, as a GitLab group path): a redirect, then the branch's files under one top directory; each download a
        // new version, as a branch that moved
        java.util.concurrent.atomic.AtomicInteger downloads = new java.util.concurrent.atomic.AtomicInteger();
        HttpServer codeHost = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        codeHost.createContext("/archive/", x -> {
            x.getResponseHeaders().add("Location", x.getRequestURI().getPath().replace("/archive/", "/codeload/"));
            x.sendResponseHeaders(302, -1);
            x.close();
        });
        codeHost.createContext("/codeload/", x -> {
            int n = downloads.incrementAndGet();
            Map<String, byte[]> files = new java.util.LinkedHashMap<>();
            files.put("bigplain-main/README.md", ("download " + n + "\n").getBytes());
            files.put("bigplain-main/src/app.txt", "app\n".getBytes());
            java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
            try (java.util.zip.GZIPOutputStream out = new java.util.zip.GZIPOutputStream(gz)) {
                out.write(ContainerServicesTest.tar(files));
            }
            boolean expected =
                    x.getRequestURI().getPath().equals("/codeload/git/" + owner.username() + "/bigplain/main.tar.gz");
            x.sendResponseHeaders(expected ? 200 : 404, expected ? gz.size() : -1);
            if (expected) {
                x.getResponseBody().write(gz.toByteArray());
            }
            x.close();
        });
        codeHost.start();
        Path data = tmp.resolve("limited");
        TestDatabase db = TestDatabase.create();
        AtriumServer limited = null;
        try {
            limited = AtriumServer.launch(
                    data,
                    db,
                    Map.of(
                            "ATRIUM_APP_DEPLOY_REMOTE_MAX_OBJECTS",
                            "10",
                            "ATRIUM_APP_DEPLOY_REMOTE_ARCHIVE_HOSTS",
                            "127.0.0.1:" + server.port + "=http://127.0.0.1:"
                                    + codeHost.getAddress().getPort() + "/archive/{owner}/{repo}/{ref}.tar.gz"));
            User u = limited.newUser();
            Http.Reply partial = u.http()
                    .post(
                            "/api/repos/import-external",
                            body(server.base() + "/git/" + owner.username() + "/big.git", u.defaultSpaceId()));
            assertEquals(201, partial.status(), partial.body());
            assertTrue(partial.get("partial").asBoolean(), partial.body());
            String id = partial.get("repository").get("id").asText();
            Http.Reply tree = u.http().get("/api/repos/" + id + "/tree/main");
            assertEquals(200, tree.status(), tree.body());
            assertEquals(40, tree.get("entries").size(), "commits and trees are there");
            assertEquals(
                    404,
                    u.http().get("/api/repos/" + id + "/blob/main/file1.txt").status(),
                    "blobs were left on the remote");

            // no blobless fetch offered: the code host's tarball of the default branch, as one commit of its files
            Http.Reply archived = u.http()
                    .post(
                            "/api/repos/import-external",
                            body(server.base() + "/git/" + owner.username() + "/bigplain.git", u.defaultSpaceId()));
            assertEquals(201, archived.status(), archived.body());
            assertFalse(archived.get("partial").asBoolean(), archived.body());
            String arch = archived.get("repository").get("id").asText();
            assertEquals(
                    "download 1\n",
                    u.http()
                            .get("/api/repos/" + arch + "/blob/main/README.md")
                            .get("content")
                            .asText());
            assertEquals(
                    "app\n",
                    u.http()
                            .get("/api/repos/" + arch + "/blob/main/src/app.txt")
                            .get("content")
                            .asText());
            JsonNode log = u.http().get("/api/repos/" + arch + "/log/main").json();
            assertTrue(log.toString().contains("archive"), log.toString());
            // a later fetch is over the limits again and takes the archive again, into the upstream's branch
            Http.Reply fetched = u.http().post("/api/repos/" + arch + "/fetch", null);
            assertEquals(200, fetched.status(), fetched.body());
            assertTrue(fetched.body().contains("refs/remotes/upstream/main"), fetched.body());
            assertEquals(2, downloads.get());

            // under another origin the host is not one whose archives are known: refused, nothing kept
            Http.Reply refused = u.http()
                    .post(
                            "/api/repos/import-external",
                            body(
                                    "http://localhost:" + server.port + "/git/" + owner.username() + "/bigplain.git",
                                    u.defaultSpaceId(),
                                    "name",
                                    "bigplain-again"));
            assertEquals(400, refused.status(), refused.body());
            assertTrue(refused.json().path("error").path("message").asText().contains("partial"), refused.body());
            assertEquals(
                    2,
                    u.http()
                            .get("/api/spaces/" + u.defaultSpaceId() + "/repos")
                            .get("repositories")
                            .size());
        } finally {
            codeHost.stop(0);
            if (limited != null) {
                limited.close();
            } else {
                db.close();
            }
            assertTrue(offered.startsWith("repo_"));
        }
    }
}
