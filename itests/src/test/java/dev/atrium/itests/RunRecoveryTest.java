package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs survive restarts: a queued run is picked up by the next process; a running run whose process died fails with a reason. */
@Timeout(240)
class RunRecoveryTest {

    @Test
    void aQueuedRunIsPickedUpAfterARestartAndARunOrphanedByAKilledProcessFails() throws Throwable {
        CountDownLatch never = new CountDownLatch(1);
        try (FakeModelServer fake = new FakeModelServer()) {
            TestDatabase db = TestDatabase.create();
            Path data = Files.createTempDirectory("atrium-recovery-");
            Map<String, String> env =
                    new HashMap<>(Map.of("ATRIUM_OPENAI_BASE_URL", fake.openAiBase(), "ATRIUM_RUNS_POLL_MS", "200"));
            AtriumServer last = null;
            try {
                // 1. an instance that executes nothing: the run stays queued when it stops
                env.put("ATRIUM_RUNS_WORKERS", "0");
                AtriumServer first = AtriumServer.launch(data, db, env);
                User u = first.newUser();
                assertEquals(
                        200,
                        u.http()
                                .patch(
                                        "/api/spaces/" + u.defaultSpaceId() + "/model",
                                        Map.of("provider", "openai", "model", "recovery"))
                                .status());
                String thread = u.http()
                        .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "t"))
                        .json()
                        .path("thread")
                        .path("id")
                        .asText();
                String queued = u.http()
                        .post("/api/threads/" + thread + "/runs", Map.of("input", "still there?"))
                        .json()
                        .path("run")
                        .path("id")
                        .asText();
                first.stop();

                // 2. the next process picks it up
                fake.script("recovery", body -> FakeModelServer.openAiText("picked up after the restart"), body -> {
                    try {
                        never.await(120, TimeUnit.SECONDS); // the second run hangs in its model call
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return FakeModelServer.openAiText("too late");
                });
                env.put("ATRIUM_RUNS_WORKERS", "2");
                AtriumServer second = AtriumServer.launch(data, db, env);
                Http http = new Http(second.base(), AgentRunsTest.token(u));
                JsonNode done = await(http, queued);
                assertEquals("completed", done.path("status").asText(), done.toString());

                // 3. a run in progress when its process is killed does not stay running for ever
                String orphan = http.post("/api/threads/" + thread + "/runs", Map.of("input", "hang"))
                        .json()
                        .path("run")
                        .path("id")
                        .asText();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (fake.received("recovery").size() < 2 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertEquals(
                        "running",
                        http.get("/api/runs/" + orphan)
                                .json()
                                .path("run")
                                .path("status")
                                .asText());
                second.process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);

                last = AtriumServer.launch(data, db, env);
                Http third = new Http(last.base(), AgentRunsTest.token(u));
                JsonNode failed = await(third, orphan);
                assertEquals("failed", failed.path("status").asText(), failed.toString());
                assertTrue(failed.path("error").asText().contains("stopped"), failed.toString());
                List<JsonNode> events = AgentRunsTest.events(third, orphan);
                assertEquals(
                        "run.failed", events.get(events.size() - 1).path("type").asText());
            } finally {
                never.countDown();
                if (last != null) {
                    last.close(); // drops the database and the data directory
                } else {
                    db.close();
                    AtriumServer.deleteTree(data.toFile());
                }
            }
        }
    }

    static JsonNode await(Http http, String runId) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode run = null;
        while (System.nanoTime() < deadline) {
            run = http.get("/api/runs/" + runId).json().path("run");
            if (List.of("completed", "failed", "cancelled")
                    .contains(run.path("status").asText())) {
                return run;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("run " + runId + " did not finish: " + run);
    }
}
