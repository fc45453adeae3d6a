package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Long jobs ({@code /admin/jobs}): maintenance of every repository run by the operator is one job with progress by
 * repository, from running to succeeded. Bundle updates as jobs: {@link BundleUpdateTest} (one that succeeds) and
 * {@link BundleUpdateRefusalsTest} (one rolled back).
 */
@SharedServer
class JobsApiTest {

    @TempDir
    Path tmp;

    @Test
    void maintenanceOfEveryRepositoryIsAJobThatEndsSucceededWithEveryRepositoryDone(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        List<String> repoIds = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String name = "jobs-" + i;
            Http.Reply created = u.http()
                    .post(
                            "/api/spaces/" + u.defaultSpaceId() + "/repos",
                            Map.of("name", name, "visibility", "private"));
            assertEquals(201, created.status(), created.body());
            repoIds.add(created.get("repository").get("id").asText());
            Path work = git.newWorkingCopy(tmp.resolve(name), "README.md", name + "\n");
            git.ok(work, "push", "-q", server.base() + "/git/" + u.username() + "/" + name + ".git", "main");
        }

        JsonNode job = startedAfter(server, Instant.now());
        String id = job.path("id").asText();
        assertEquals("repository-maintenance", job.path("kind").asText(), job.toString());
        assertEquals("dev.atrium.repos", job.path("bundle").asText(), job.toString());
        assertEquals("running", job.path("state").asText(), "a job just started runs: " + job);
        assertTrue(job.path("ended_at").isNull(), job.toString());

        // it is the latest maintenance of every repository
        JsonNode latest = server.operator().get("/admin/repos/maintenance").get("job");
        // (or a newer one, another test's on the shared server)
        assertTrue(
                latest.path("id").asText().equals(id)
                        || !Instant.parse(latest.path("started_at").asText())
                                .isBefore(Instant.parse(job.path("started_at").asText())),
                latest.toString());
        List<String> seen = new ArrayList<>();
        for (long until = System.currentTimeMillis() + 180_000; System.currentTimeMillis() < until; Thread.sleep(100)) {
            job = server.operator().get("/admin/jobs/" + id).get("job");
            seen.add(job.path("state").asText() + " " + job.path("done").asLong() + "/"
                    + job.path("total").asLong());
            if (!job.path("state").asText().equals("running")) {
                break;
            }
        }
        assertEquals("succeeded", job.path("state").asText(), job.toString());
        long total = job.path("total").asLong();
        assertTrue(total >= 3, "every repository, the three new ones too: " + job);
        assertEquals(total, job.path("done").asLong(), job.toString());
        assertTrue(
                job.path("summary")
                        .asText()
                        .matches("\\d+ of " + total + " repositories collected, 0 failed(, \\d+ deleted meanwhile)?"),
                job.toString());
        assertTrue(job.path("ended_at").isTextual() && job.path("reason").isNull(), job.toString());
        System.out.println("maintenance of every repository, as polled: " + seen);

        // each repository was collected by it
        for (String repoId : repoIds) {
            JsonNode gc =
                    server.operator().get("/admin/repos/" + repoId + "/gc").get("gc");
            assertEquals("operator: every repository", gc.path("reason").asText(), gc.toString());
            assertEquals(1, gc.path("packs").asInt(), gc.toString());
        }

        JsonNode succeeded =
                server.operator().get("/admin/jobs?state=succeeded").get("jobs");
        assertTrue(contains(succeeded, id), "listed among the succeeded");
        assertTrue(!contains(server.operator().get("/admin/jobs?state=running").get("jobs"), id));
    }

    @Test
    void aRepositoryCollectionAskedForByTheOperatorIsAJob(AtriumServer server) throws Exception {
        User u = server.newUser();
        String repoId = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "one", "visibility", "private"))
                .get("repository")
                .get("id")
                .asText();
        Http.Reply asked = server.operator().post("/admin/repos/" + repoId + "/gc", Map.of());
        assertEquals(202, asked.status(), asked.body());
        String id = asked.get("job").path("id").asText();
        JsonNode job = awaitEnd(server, id);
        assertEquals("succeeded", job.path("state").asText(), job.toString());
        assertEquals(1, job.path("done").asLong(), job.toString());
        assertTrue(job.path("title").asText().contains(repoId), job.toString());
    }

    @Test
    void jobsAreTheOperatorsAndAnUnknownOneOrStateIsSaidSo(AtriumServer server) {
        User u = server.newUser();
        Http.Reply stranger = u.http().get("/admin/jobs");
        assertTrue(stranger.status() == 401 || stranger.status() == 403, stranger.body());
        Http.Reply missing = server.operator().get("/admin/jobs/job_doesnotexist00000000");
        assertEquals(404, missing.status(), missing.body());
        assertEquals("NOT_FOUND", missing.get("error").path("code").asText(), missing.body());
        Http.Reply badState = server.operator().get("/admin/jobs?state=finished");
        assertEquals(400, badState.status(), badState.body());
        assertTrue(badState.get("error").path("message").asText().contains("running"), badState.body());
    }

    /**
     * Maintenance of every repository started at or after {@code after}: one started before (by another test on the
     * shared server) is what a POST answers while it runs, and may not have listed the repositories made since.
     */
    static JsonNode startedAfter(AtriumServer server, Instant after) throws InterruptedException {
        for (int attempt = 0; attempt < 5; attempt++) {
            Http.Reply started = server.operator().post("/admin/repos/maintenance", Map.of());
            assertEquals(202, started.status(), started.body());
            JsonNode job = started.get("job");
            if (!Instant.parse(job.path("started_at").asText()).isBefore(after)) {
                return job;
            }
            awaitEnd(server, job.path("id").asText());
        }
        throw new AssertionError("no maintenance of every repository of its own in five attempts");
    }

    static JsonNode awaitEnd(AtriumServer server, String id) throws InterruptedException {
        JsonNode job = null;
        for (long until = System.currentTimeMillis() + 120_000; System.currentTimeMillis() < until; Thread.sleep(100)) {
            job = server.operator().get("/admin/jobs/" + id).get("job");
            if (!job.path("state").asText().equals("running")) {
                return job;
            }
        }
        return job;
    }

    static boolean contains(JsonNode jobs, String id) {
        for (JsonNode j : jobs) {
            if (j.path("id").asText().equals(id)) {
                return true;
            }
        }
        return false;
    }

    /** The newest job of {@code kind} whose title contains {@code titlePart}, or null. */
    static JsonNode newest(AtriumServer server, String kind, String titlePart) {
        for (JsonNode j : server.operator().get("/admin/jobs").get("jobs")) {
            if (j.path("kind").asText().equals(kind) && j.path("title").asText().contains(titlePart)) {
                return j;
            }
        }
        return null;
    }
}
