package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Actions when its runner is missing, and across restarts (issue 36): without podman, runs stay queued saying why and
 * {@code /healthz} names the runner; the next server with podman runs them; a job whose server was killed ends
 * failed with a reason as soon as the next server starts, never in progress for ever.
 */
@Timeout(300)
class ActionsRecoveryTest {

    static final String WORKFLOW = """
            on:
              push:
              workflow_dispatch:
            jobs:
              hello:
                runs-on: busybox
                steps:
                  - run: echo hello from the job
            """;

    static final String SLOW = """
            on: workflow_dispatch
            jobs:
              slow:
                runs-on: busybox
                steps:
                  - run: echo sleeping && sleep 117
            """;

    /** Whether the slow job's {@code sleep 117} runs anywhere on this machine. */
    static boolean sleeping() throws java.io.IOException {
        try (var procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().matches("\\d+")).anyMatch(p -> {
                try {
                    return Files.readString(p.resolve("cmdline"))
                            .replace('\0', ' ')
                            .trim()
                            .equals("sleep 117");
                } catch (java.io.IOException | java.io.UncheckedIOException gone) {
                    return false;
                }
            });
        }
    }

    @Test
    void runsWaitForAMissingRunnerAndAJobOfAKilledServerEndsFailedWhenTheNextOneStarts() throws Throwable {
        TestDatabase db = TestDatabase.create();
        Path data = Files.createTempDirectory("atrium-actions-recovery-");
        Path home = Files.createTempDirectory("atrium-actions-recovery-git-");
        Map<String, String> env = new HashMap<>();
        AtriumServer last = null;
        try {
            env.put("ATRIUM_PODMAN_BIN", "/nonexistent/podman");
            AtriumServer first = AtriumServer.launch(data, db, env);
            User u = first.newUser();
            Http.Reply made = u.http()
                    .post(
                            "/api/spaces/" + u.defaultSpaceId() + "/repos",
                            Map.of("name", "recovered", "visibility", "private"));
            String repo = made.get("repository").get("id").asText();
            GitClient git = new GitClient(home, u.http().token());
            Path work = git.newWorkingCopy(
                    home.resolve("work"), ".github/workflows/ci.yml", WORKFLOW, ".github/workflows/slow.yml", SLOW);
            git.ok(work, "push", "-q", made.get("repository").get("clone_url").asText(), "main");
            JsonNode waiting = ActionsTest.awaitRun(
                    u, repo, r -> r.path("reason").asText().contains("not found"), Duration.ofSeconds(30));
            assertEquals("queued", waiting.get("status").asText(), waiting.toString());
            assertTrue(waiting.get("reason").asText().contains("podman"), waiting.toString());
            Http.Reply health = new Http(first.base(), null).get("/healthz");
            assertEquals(200, health.status(), health.body());
            assertTrue(
                    health.get("details").get("actions.runner").asText().startsWith("podman: unavailable"),
                    health.body());
            first.stop();

            env.remove("ATRIUM_PODMAN_BIN");
            AtriumServer second = AtriumServer.launch(data, db, env);
            Http http = new Http(second.base(), u.http().token());
            User again = new User(u.username(), u.principalId(), u.defaultSpaceId(), http);
            JsonNode ran = ActionsTest.awaitRun(
                    again, repo, waiting.get("id").asText(), ActionsTest::completed, Duration.ofSeconds(60));
            assertEquals("success", ran.get("conclusion").asText(), ran.toString());
            assertTrue(new Http(second.base(), null)
                    .get("/healthz")
                    .get("details")
                    .get("actions.runner")
                    .asText()
                    .startsWith("podman: ready"));

            String slowRun = http.post("/api/repos/" + repo + "/actions/runs", Map.of("workflow", "slow.yml"))
                    .get("workflow_run")
                    .get("id")
                    .asText();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            JsonNode job = null;
            while (System.nanoTime() < deadline) {
                job = ActionsTest.jobsByName(again, repo, slowRun).get("slow");
                if (job.get("status").asText().equals("in_progress")
                        && ActionsTest.log(again, repo, job.get("id").asText()).contains("sleeping")) {
                    break;
                }
                Thread.sleep(100);
            }
            // SIGKILL to the JVM alone, as a crash would: its podman service and the job's container live on
            for (ProcessHandle p : second.process.toHandle().descendants().toList()) {
                if (p.info().command().orElse("").endsWith("java")) {
                    p.destroyForcibly();
                    p.onExit().get();
                }
            }
            second.process.destroyForcibly();
            second.process.waitFor();

            last = AtriumServer.launch(data, db, env);
            User third = new User(
                    u.username(),
                    u.principalId(),
                    u.defaultSpaceId(),
                    new Http(last.base(), u.http().token()));
            long started = System.nanoTime();
            JsonNode ended = ActionsTest.awaitRun(third, repo, slowRun, ActionsTest::completed, Duration.ofSeconds(30));
            System.out.println("actions recovery: the orphaned job ended " + (System.nanoTime() - started) / 1_000_000
                    + " ms after the next server answered");
            assertEquals("failure", ended.get("conclusion").asText(), ended.toString());
            JsonNode failed = ActionsTest.jobsByName(third, repo, slowRun).get("slow");
            assertTrue(failed.get("reason").asText().contains("stopped"), failed.toString());
            // and the container the dead server left running is removed by the next one's runner
            long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (sleeping() && System.nanoTime() < gone) {
                Thread.sleep(200);
            }
            assertTrue(!sleeping(), "the orphaned job's container still runs");
        } finally {
            if (last != null) {
                last.close();
            } else {
                db.close();
                AtriumServer.deleteTree(data.toFile());
            }
            AtriumServer.deleteTree(home.toFile());
        }
    }
}
