package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Repositories are maintained (JGit GC with bitmaps) after pushes, without an operator, and on the operator's request. */
@SharedServer
class RepositoryMaintenanceTest {

    private static final int COMMITS = 20_000;

    @TempDir
    Path tmp;

    @Test
    void aPushOfTwentyThousandCommitsLeadsToABitmapWithoutAnyOperatorAction(AtriumServer server) throws Exception {
        User u = server.newUser();
        Http.Reply created = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "big", "visibility", "private"));
        assertEquals(201, created.status(), created.body());
        String repoId = created.get("repository").get("id").asText();
        Path gitDir = server.data.resolve("git").resolve(repoId + ".git");

        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = tmp.resolve("work");
        Files.createDirectories(work);
        git.ok(work, "init", "-q", "-b", "main");
        fastImport(work, COMMITS);
        assertEquals(String.valueOf(COMMITS), git.ok(work, "rev-list", "--count", "main"));
        git.ok(work, "push", "-q", server.base() + "/git/" + u.username() + "/big.git", "main");

        JsonNode gc = null;
        for (long until = System.currentTimeMillis() + 180_000; System.currentTimeMillis() < until; Thread.sleep(250)) {
            gc = server.operator().get("/admin/repos/" + repoId + "/gc").get("gc");
            if (gc.path("bitmaps").asInt() > 0 && gc.path("state").asText().equals("idle")) {
                break;
            }
        }
        assertTrue(gc != null && gc.path("bitmaps").asInt() > 0, "a bitmap after the push: " + gc);
        assertTrue(gc.path("reason").asText().startsWith("push"), gc.toString());
        assertTrue(gc.path("error").isNull(), gc.toString());
        try (Stream<Path> packs = Files.list(gitDir.resolve("objects/pack"))) {
            assertTrue(
                    packs.anyMatch(p -> p.toString().endsWith(".bitmap")), "a .bitmap file in the repository's packs");
        }
        System.out.println("repository maintenance after a push of " + COMMITS + " commits: " + gc);

        // what users get: a clone of the maintained repository has the whole history
        Path clone = tmp.resolve("clone");
        git.ok(tmp, "clone", "-q", server.base() + "/git/" + u.username() + "/big.git", clone.toString());
        assertEquals(String.valueOf(COMMITS), git.ok(clone, "rev-list", "--count", "HEAD"));
    }

    @Test
    void theOperatorCanAskForMaintenanceAndSeeWhenItLastRan(AtriumServer server) throws Exception {
        User u = server.newUser();
        Http.Reply created = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "small", "visibility", "private"));
        String repoId = created.get("repository").get("id").asText();
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "small\n");
        git.ok(work, "push", "-q", server.base() + "/git/" + u.username() + "/small.git", "main");

        JsonNode before =
                server.operator().get("/admin/repos/" + repoId + "/gc").get("gc");
        assertTrue(before.path("last_run_at").isNull(), "a small push needs no maintenance: " + before);

        // what a push that died with its server leaves (GitCrashTest makes one for real): maintenance removes it
        Path objects = server.data.resolve("git").resolve(repoId + ".git").resolve("objects");
        Files.write(objects.resolve("incoming_4242.pack"), new byte[4096]);
        Files.write(objects.resolve("incoming_4242.idx"), new byte[64]);

        Http.Reply asked = server.operator().post("/admin/repos/" + repoId + "/gc", Map.of());
        assertEquals(202, asked.status(), asked.body());
        JsonNode gc = null;
        for (long until = System.currentTimeMillis() + 60_000; System.currentTimeMillis() < until; Thread.sleep(100)) {
            gc = server.operator().get("/admin/repos/" + repoId + "/gc").get("gc");
            if (gc.path("last_run_at").isTextual() && gc.path("state").asText().equals("idle")) {
                break;
            }
        }
        assertEquals("operator", gc.path("reason").asText(), gc.toString());
        assertEquals(1, gc.path("packs").asInt(), gc.toString());
        assertTrue(
                Files.notExists(objects.resolve("incoming_4242.pack"))
                        && Files.notExists(objects.resolve("incoming_4242.idx")),
                "maintenance leaves no temporary pack of an unfinished push");

        // the owner is not an operator, and an unknown repository is the spec's 404
        Http.Reply notOperator = u.http().post("/admin/repos/" + repoId + "/gc", Map.of());
        assertTrue(notOperator.status() == 403 || notOperator.status() == 401, notOperator.body());
        Http.Reply missing = server.operator().get("/admin/repos/repo_doesnotexist/gc");
        assertEquals(404, missing.status(), missing.body());
        assertTrue(missing.body().contains("\"NOT_FOUND\""), missing.body());
    }

    @Test
    void aRepositoryPushedToOftenIsCollectedIntoOnePackAndNotCollectedAgainOnEveryPush(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String repoId = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "busy", "visibility", "private"))
                .get("repository")
                .get("id")
                .asText();
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("busy"), "README.md", "0\n");
        String remote = server.base() + "/git/" + u.username() + "/busy.git";
        // each push is a pack of its own: more than maxPacks (16) of them, all younger than an hour
        for (int i = 1; i <= 18; i++) {
            Files.writeString(work.resolve("README.md"), i + "\n");
            git.ok(work, "commit", "-q", "-am", "push " + i);
            git.ok(work, "push", "-q", remote, "main");
        }
        JsonNode gc = null;
        for (long until = System.currentTimeMillis() + 60_000; System.currentTimeMillis() < until; Thread.sleep(100)) {
            gc = server.operator().get("/admin/repos/" + repoId + "/gc").get("gc");
            if (gc.path("last_run_at").isTextual() && gc.path("state").asText().equals("idle")) {
                break;
            }
        }
        assertTrue(gc.path("reason").asText().contains("pack files"), gc.toString());
        assertTrue(gc.path("packs").asInt() <= 2, "the packs the repack made redundant are gone: " + gc);
        String lastRun = gc.path("last_run_at").asText();
        Files.writeString(work.resolve("README.md"), "one more\n");
        git.ok(work, "commit", "-q", "-am", "one more");
        git.ok(work, "push", "-q", remote, "main");
        Thread.sleep(1500);
        JsonNode after = server.operator().get("/admin/repos/" + repoId + "/gc").get("gc");
        assertEquals(lastRun, after.path("last_run_at").asText(), "one more push needs no collection: " + after);
    }

    /** {@code n} commits on main, each changing one of 50 files, written with {@code git fast-import}. */
    private static void fastImport(Path work, int n) throws Exception {
        Path stream = work.resolve("../import.stream");
        try (BufferedWriter w = Files.newBufferedWriter(stream, StandardCharsets.UTF_8)) {
            for (int i = 1; i <= n; i++) {
                String message = "commit " + i + "\n";
                String content = "line " + i + " of file " + (i % 50) + "\n";
                w.write("commit refs/heads/main\nmark :" + i + "\ncommitter Test <test@example.com> "
                        + (1_700_000_000L + i) + " +0000\n");
                w.write("data " + message.getBytes(StandardCharsets.UTF_8).length + "\n" + message);
                if (i > 1) {
                    w.write("from :" + (i - 1) + "\n");
                }
                w.write("M 644 inline file" + (i % 50) + ".txt\ndata " + content.getBytes(StandardCharsets.UTF_8).length
                        + "\n" + content + "\n");
            }
        }
        Process p = new ProcessBuilder("git", "fast-import", "--quiet")
                .directory(work.toFile())
                .redirectInput(stream.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        Files.delete(stream);
    }
}
