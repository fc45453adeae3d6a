package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    void aRepositoryOverTheLimitsFallsBackToABloblessFetchOnlyWhenTheRemoteOffersIt(AtriumServer server)
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
        Path data = tmp.resolve("limited");
        TestDatabase db = TestDatabase.create();
        AtriumServer limited = null;
        try {
            limited = AtriumServer.launch(data, db, Map.of("ATRIUM_APP_DEPLOY_REMOTE_MAX_OBJECTS", "10"));
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

            Http.Reply refused = u.http()
                    .post(
                            "/api/repos/import-external",
                            body(server.base() + "/git/" + owner.username() + "/bigplain.git", u.defaultSpaceId()));
            assertEquals(400, refused.status(), refused.body());
            assertTrue(refused.json().path("error").path("message").asText().contains("partial"), refused.body());
            assertEquals(
                    1,
                    u.http()
                            .get("/api/spaces/" + u.defaultSpaceId() + "/repos")
                            .get("repositories")
                            .size());
        } finally {
            if (limited != null) {
                limited.close();
            } else {
                db.close();
            }
            assertTrue(offered.startsWith("repo_"));
        }
    }
}
