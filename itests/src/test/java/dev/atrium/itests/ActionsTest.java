package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Actions (issue 36), driven as a user would: workflow files pushed with the real {@code git}, jobs run in real
 * containers (podman, the busybox job image {@code ./atrium test} provides), artifacts between jobs, failures,
 * cancels, reruns and time limits.
 */
@SharedServer
class ActionsTest {

    static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    GitClient git(User u) {
        return new GitClient(tmp.resolve("home-" + u.username()), u.http().token());
    }

    /** A repository of {@code owner} with {@code files} (path, content pairs) pushed to main; returns its id. */
    String pushed(User owner, String name, String visibility, String... files) throws Exception {
        Http.Reply r = owner.http()
                .post(
                        "/api/spaces/" + owner.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility));
        assertEquals(201, r.status(), r.body());
        Path work = git(owner).newWorkingCopy(tmp.resolve("work-" + name), files);
        git(owner).ok(work, "push", "-q", r.get("repository").get("clone_url").asText(), "main");
        return r.get("repository").get("id").asText();
    }

    static String runs(String repoId) {
        return "/api/repos/" + repoId + "/actions/runs";
    }

    /** Waits for the repository's newest run (of {@code workflow}, when given) to satisfy {@code done}. */
    static JsonNode awaitRun(User u, String repoId, Predicate<JsonNode> done, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            Http.Reply r = u.http().get(runs(repoId));
            assertEquals(200, r.status(), r.body());
            assertNotNull(r.json(), r.body());
            JsonNode list = r.get("workflow_runs");
            if (list.size() > 0) {
                last = list.get(0);
                if (done.test(last)) {
                    return last;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the run did not get there within " + within + "; last seen: " + last);
    }

    static JsonNode awaitRun(User u, String repoId, String runId, Predicate<JsonNode> done, Duration within)
            throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = u.http().get(runs(repoId) + "/" + runId).get("workflow_run");
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the run did not get there within " + within + "; last seen: " + last);
    }

    static boolean completed(JsonNode run) {
        return run.get("status").asText().equals("completed");
    }

    static Map<String, JsonNode> jobsByName(User u, String repoId, String runId) {
        Http.Reply r = u.http().get(runs(repoId) + "/" + runId + "/jobs");
        assertEquals(200, r.status(), r.body());
        Map<String, JsonNode> out = new HashMap<>();
        r.get("jobs").forEach(j -> out.put(j.get("name").asText(), j));
        return out;
    }

    static String log(User u, String repoId, String jobId) {
        Http.Reply r = u.http().get("/api/repos/" + repoId + "/actions/jobs/" + jobId + "/logs");
        assertEquals(200, r.status(), r.body());
        return r.body();
    }

    static byte[] download(User u, String path) throws Exception {
        HttpResponse<byte[]> r = CLIENT.send(
                HttpRequest.newBuilder(URI.create(u.http().base() + path))
                        .header("Authorization", "Bearer " + u.http().token())
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), new String(r.body(), StandardCharsets.UTF_8));
        assertEquals("application/zip", r.headers().firstValue("Content-Type").orElse(""));
        return r.body();
    }

    static Map<String, String> unzip(byte[] zip) throws Exception {
        Map<String, String> out = new HashMap<>();
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                out.put(e.getName(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    static final String MATRIX_WORKFLOW = """
            name: ci
            on: push
            jobs:
              build:
                runs-on: busybox
                strategy:
                  matrix:
                    n: [1, 2, 3]
                steps:
                  - uses: actions/checkout@v4
                  - run: echo "hello ${{ matrix.n }}" && cat README.md
                  - run: mkdir -p out && echo "payload-${{ matrix.n }}" > out/p.txt
                  - uses: actions/upload-artifact@v4
                    with:
                      name: out-${{ matrix.n }}
                      path: out/
              check:
                needs: build
                runs-on: busybox
                steps:
                  - uses: actions/download-artifact@v4
                    with:
                      name: out-2
                      path: got
                  - run: test "$(cat got/p.txt)" = "payload-2" && echo checked
            """;

    @Test
    void aPushedWorkflowRunsAMatrixWhoseArtifactADependentJobChecks(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String repo = pushed(
                owner,
                "ci-matrix",
                "private",
                "README.md",
                "the readme\n",
                ".github/workflows/ci.yml",
                MATRIX_WORKFLOW);

        JsonNode run = awaitRun(owner, repo, ActionsTest::completed, Duration.ofSeconds(90));
        assertEquals("push", run.get("event").asText());
        assertEquals("refs/heads/main", run.get("ref").asText());
        Map<String, JsonNode> jobs = jobsByName(owner, repo, run.get("id").asText());
        assertEquals("success", run.get("conclusion").asText(), jobs.toString());
        assertEquals(4, jobs.size(), jobs.keySet().toString());
        for (int n = 1; n <= 3; n++) {
            JsonNode b = jobs.get("build (" + n + ")");
            assertNotNull(b, jobs.keySet().toString());
            assertEquals("success", b.get("conclusion").asText());
            String log = log(owner, repo, b.get("id").asText());
            assertTrue(log.contains("hello " + n + "\n") && log.contains("the readme"), log);
            assertEquals(4, b.get("steps").size());
        }
        assertTrue(log(owner, repo, jobs.get("check").get("id").asText()).contains("checked"));
        // each of the 4 jobs is metered as at least one minute, counted where its end is recorded (billing)
        BillingTest.eventually(
                "the jobs' minutes are counted", () -> BillingTest.usedOf(owner, "actions_minutes") >= 4, 10);

        Http.Reply arts = owner.http().get(runs(repo) + "/" + run.get("id").asText() + "/artifacts");
        assertEquals(200, arts.status(), arts.body());
        assertEquals(3, arts.get("artifacts").size(), arts.body());
        JsonNode out2 = null;
        for (JsonNode a : arts.get("artifacts")) {
            if (a.get("name").asText().equals("out-2")) {
                out2 = a;
            }
        }
        assertNotNull(out2, arts.body());
        byte[] zip = download(owner, out2.get("archive_download_url").asText());
        assertEquals(out2.get("size_in_bytes").asLong(), zip.length);
        assertEquals(Map.of("p.txt", "payload-2\n"), unzip(zip));

        // someone else's repository's run and artifact: 404 as for a missing one
        User stranger = server.newUser();
        assertEquals(
                404,
                stranger.http().get(runs(repo) + "/" + run.get("id").asText()).status());
        assertEquals(
                404,
                stranger.http().get(out2.get("archive_download_url").asText()).status());
        assertEquals(
                200,
                owner.http().delete(out2.get("archive_download_url").asText()).status());
        assertEquals(
                404, owner.http().get(out2.get("archive_download_url").asText()).status());
    }

    static final String FAILING_WORKFLOW = """
            on: push
            jobs:
              fails:
                runs-on: busybox
                steps:
                  - run: echo about to fail && exit 3
                  - run: echo not reached
              after:
                needs: fails
                runs-on: busybox
                steps:
                  - run: echo never
              fine:
                runs-on: busybox
                steps:
                  - run: echo fine
              cleanup:
                needs: fails
                if: always()
                runs-on: busybox
                steps:
                  - run: echo "fails was ${{ needs.fails.result }}"
            """;

    @Test
    void aFailingStepFailsItsJobSkipsItsDependantsAndARerunOfFailedJobsRerunsOnlyThose(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        String repo = pushed(owner, "ci-fails", "private", ".github/workflows/ci.yml", FAILING_WORKFLOW);
        JsonNode run = awaitRun(owner, repo, ActionsTest::completed, Duration.ofSeconds(60));
        String runId = run.get("id").asText();
        assertEquals("failure", run.get("conclusion").asText());
        Map<String, JsonNode> jobs = jobsByName(owner, repo, runId);
        assertEquals("failure", jobs.get("fails").get("conclusion").asText());
        JsonNode steps = jobs.get("fails").get("steps");
        assertEquals("failure", steps.get(0).get("conclusion").asText());
        assertEquals("skipped", steps.get(1).get("conclusion").asText());
        assertEquals("skipped", jobs.get("after").get("conclusion").asText());
        assertEquals("success", jobs.get("fine").get("conclusion").asText());
        assertEquals("success", jobs.get("cleanup").get("conclusion").asText());
        assertTrue(log(owner, repo, jobs.get("cleanup").get("id").asText()).contains("fails was failure"));
        String failedLog = log(owner, repo, jobs.get("fails").get("id").asText());
        assertTrue(failedLog.contains("about to fail") && failedLog.contains("exit code 3"), failedLog);

        Http.Reply rerun = owner.http().post(runs(repo) + "/" + runId + "/rerun", Map.of("failed_only", true));
        assertEquals(201, rerun.status(), rerun.body());
        assertEquals(2, rerun.get("workflow_run").get("run_attempt").asInt());
        run = awaitRun(owner, repo, runId, ActionsTest::completed, Duration.ofSeconds(60));
        Map<String, JsonNode> again = jobsByName(owner, repo, runId);
        assertEquals(2, again.get("fails").get("run_attempt").asInt(), "the failed job ran again");
        assertEquals(2, again.get("after").get("run_attempt").asInt(), "and what needs it");
        assertEquals(2, again.get("cleanup").get("run_attempt").asInt());
        assertEquals(1, again.get("fine").get("run_attempt").asInt(), "the job that succeeded did not");
        assertEquals(jobs.get("fine").get("completed_at"), again.get("fine").get("completed_at"));
        assertEquals("failure", run.get("conclusion").asText());
        assertEquals(
                409,
                owner.http()
                        .post(runs(repo) + "/" + runId + "/cancel", Map.of())
                        .status());
    }

    static final String SLOW_WORKFLOW = """
            on: workflow_dispatch
            jobs:
              slow:
                runs-on: busybox
                steps:
                  - run: echo sleeping && sleep 60
              limited:
                runs-on: busybox
                timeout-minutes: 0.05
                steps:
                  - run: echo started && sleep 60
            """;

    @Test
    void cancelStopsARunningContainerAtOnceAndTimeoutMinutesIsEnforced(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String repo = pushed(owner, "ci-slow", "private", ".github/workflows/slow.yml", SLOW_WORKFLOW);
        assertEquals(0, owner.http().get(runs(repo)).get("total").asInt(), "a push does not start a dispatch workflow");
        Http.Reply started = owner.http().post(runs(repo), Map.of("workflow", "slow.yml"));
        assertEquals(201, started.status(), started.body());
        String runId = started.get("workflow_run").get("id").asText();
        assertEquals(
                "workflow_dispatch", started.get("workflow_run").get("event").asText());

        // the slow job's step is running: its log says so
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String slowId = null;
        while (System.nanoTime() < deadline) {
            JsonNode slow = jobsByName(owner, repo, runId).get("slow");
            if (slow != null && slow.get("status").asText().equals("in_progress")) {
                slowId = slow.get("id").asText();
                if (log(owner, repo, slowId).contains("sleeping")) {
                    break;
                }
            }
            Thread.sleep(100);
        }
        assertNotNull(slowId);
        long t0 = System.nanoTime();
        Http.Reply cancel = owner.http().post(runs(repo) + "/" + runId + "/cancel", Map.of());
        assertEquals(202, cancel.status(), cancel.body());
        JsonNode run = awaitRun(owner, repo, runId, ActionsTest::completed, Duration.ofSeconds(30));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 5_000, "the run ended " + ms + " ms after the cancel");
        Map<String, JsonNode> jobs = jobsByName(owner, repo, runId);
        assertEquals("cancelled", jobs.get("slow").get("conclusion").asText(), jobs.toString());
        assertEquals("cancelled", run.get("conclusion").asText());

        // the limited job, alone: 3 s of timeout-minutes end it timed_out
        Http.Reply second = owner.http().post(runs(repo), Map.of("workflow", ".github/workflows/slow.yml"));
        String secondId = second.get("workflow_run").get("id").asText();
        awaitRun(
                owner,
                repo,
                secondId,
                r -> jobsByName(owner, repo, secondId)
                        .get("limited")
                        .get("status")
                        .asText()
                        .equals("completed"),
                Duration.ofSeconds(40));
        JsonNode limited = jobsByName(owner, repo, secondId).get("limited");
        assertEquals("timed_out", limited.get("conclusion").asText(), limited.toString());
        assertTrue(limited.get("reason").asText().contains("timeout-minutes"), limited.toString());
        assertEquals(
                202,
                owner.http()
                        .post(runs(repo) + "/" + secondId + "/cancel", Map.of())
                        .status());
    }

    static final String SECRET = "s3cr3t-Value/with+signs=";

    static final String SECRET_WORKFLOW = """
            on: [push, pull_request]
            jobs:
              leak:
                runs-on: busybox
                outputs:
                  copied: ${{ steps.o.outputs.copy }}
                steps:
                  - id: o
                    run: |
                      echo "plain [${{ secrets.TOKEN }}]"
                      echo "env [$TOKEN]"
                      printf '%s' "$TOKEN" | base64
                      printf 'x%s' "$TOKEN" | base64
                      echo "url [s3cr3t-Value%2Fwith%2Bsigns%3D]"
                      echo "copy=$TOKEN" >> "$GITHUB_OUTPUT"
                      mkdir -p out && echo "$TOKEN" > out/s.txt
                    env:
                      TOKEN: ${{ secrets.TOKEN }}
                  - uses: actions/upload-artifact@v4
                    with:
                      name: out
                      path: out
            """;

    @Test
    void aSecretNeverAppearsInLogsOrAnswersAndARunFromAForkGetsNone(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String base = "/api/repos/";
        Http.Reply made = owner.http()
                .post(
                        "/api/spaces/" + owner.defaultSpaceId() + "/repos",
                        Map.of("name", "ci-secret", "visibility", "public"));
        String repo = made.get("repository").get("id").asText();
        String secrets = base + repo + "/actions/secrets";
        assertEquals(
                201,
                owner.http().put(secrets + "/TOKEN", Map.of("value", SECRET)).status());
        assertEquals(
                200,
                owner.http().put(secrets + "/TOKEN", Map.of("value", SECRET)).status());
        assertEquals(
                400,
                owner.http().put(secrets + "/GITHUB_X", Map.of("value", "v")).status());
        assertEquals(
                400, owner.http().put(secrets + "/9x", Map.of("value", "v")).status());
        Http.Reply again = owner.http().put(secrets + "/TOKEN", Map.of("value", SECRET + "2"));
        assertEquals("TOKEN", again.get("secret").get("name").asText(), again.body());
        assertFalse(again.body().contains(SECRET), again.body());
        assertEquals(
                200,
                owner.http().put(secrets + "/TOKEN", Map.of("value", SECRET)).status());
        Http.Reply listed = owner.http().get(secrets);
        assertEquals(200, listed.status(), listed.body());
        assertEquals("TOKEN", listed.get("secrets").get(0).get("name").asText());
        assertFalse(listed.body().contains(SECRET));
        User stranger = server.newUser();
        assertEquals(403, stranger.http().get(secrets).status(), "a public repository's secrets are its owner's");

        Path work = git(owner).newWorkingCopy(tmp.resolve("work-secret"), ".github/workflows/ci.yml", SECRET_WORKFLOW);
        git(owner)
                .ok(work, "push", "-q", made.get("repository").get("clone_url").asText(), "main");
        JsonNode run = awaitRun(owner, repo, ActionsTest::completed, Duration.ofSeconds(60));
        assertEquals("success", run.get("conclusion").asText());
        JsonNode job = jobsByName(owner, repo, run.get("id").asText()).get("leak");
        String log = log(owner, repo, job.get("id").asText());
        assertTrue(log.contains("plain [***]") && log.contains("env [***]") && log.contains("url [***]"), log);
        String b64 = java.util.Base64.getEncoder().encodeToString(SECRET.getBytes(StandardCharsets.UTF_8));
        assertFalse(log.contains(SECRET) || log.contains(b64) || log.contains(b64.substring(4, 20)), log);
        assertFalse(job.toString().contains(SECRET), "the job's outputs leave out a secret: " + job);
        Http.Reply arts = owner.http().get(runs(repo) + "/" + run.get("id").asText() + "/artifacts");
        assertFalse(arts.body().contains(SECRET));
        for (Http.Reply r : List.of(
                owner.http().get(runs(repo)),
                owner.http().get(runs(repo) + "/" + run.get("id").asText() + "/jobs"))) {
            assertFalse(r.body().contains(SECRET), r.body());
        }

        // a pull request from a fork: its run in the base repository gets no secret
        Http.Reply forked = stranger.http().post(base + repo + "/fork", Map.of("space_id", stranger.defaultSpaceId()));
        assertEquals(201, forked.status(), forked.body());
        String fork = forked.get("repository").get("id").asText();
        Path fw = tmp.resolve("fork");
        GitClient sg = git(stranger);
        sg.ok(tmp, "clone", "-q", forked.get("repository").get("clone_url").asText(), fw.toString());
        sg.ok(fw, "checkout", "-q", "-b", "feature");
        Files.writeString(fw.resolve("x.txt"), "x\n");
        sg.ok(fw, "add", "-A");
        sg.ok(fw, "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-q", "-m", "x");
        sg.ok(fw, "push", "-q", "origin", "feature");
        Http.Reply pr = stranger.http()
                .post(base + repo + "/pulls", Map.of("title", "x", "head", "feature", "head_repo_id", fork));
        assertEquals(201, pr.status(), pr.body());
        JsonNode prRun = awaitRun(
                owner,
                repo,
                r -> r.get("event").asText().equals("pull_request") && completed(r),
                Duration.ofSeconds(60));
        assertTrue(prRun.get("from_fork").asBoolean());
        JsonNode prJob = jobsByName(owner, repo, prRun.get("id").asText()).get("leak");
        String prLog = log(owner, repo, prJob.get("id").asText());
        assertTrue(prLog.contains("plain []") && prLog.contains("env []"), prLog);
    }

    @Test
    void anUnsupportedUsesOrAYamlErrorIsRefusedAtPutAndAtPushWithItsLine(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String repo = pushed(owner, "ci-valid", "private", "README.md", "r\n");
        String workflows = "/api/repos/" + repo + "/workflows";
        String unsupported =
                "on: push\njobs:\n  a:\n    runs-on: busybox\n    steps:\n      - uses: someone/action@v1\n";
        Http.Reply r = owner.http().send("PUT", workflows + "/ci.yml", unsupported, "text/yaml");
        assertEquals(422, r.status(), r.body());
        assertEquals("INVALID_WORKFLOW", r.errorCode());
        assertTrue(r.body().contains("line 6") && r.body().contains("someone/action@v1"), r.body());
        r = owner.http().put(workflows + "/ci.yml", Map.of("content", "on: push\njobs:\n  a: [unclosed\n"));
        assertEquals(422, r.status(), r.body());
        assertTrue(r.body().contains("line "), r.body());
        assertEquals(0, owner.http().get(workflows).get("workflows").size(), "nothing refused was kept");

        String good =
                "name: good\non: workflow_dispatch\njobs:\n  a:\n    runs-on: busybox\n    steps:\n      - run: echo ok\n";
        r = owner.http().send("PUT", workflows + "/good.yml", good, "text/yaml");
        assertEquals(201, r.status(), r.body());
        assertEquals(".github/workflows/good.yml", r.get("workflow").get("path").asText());
        assertEquals("good", r.get("workflow").get("name").asText());
        assertEquals("active", r.get("workflow").get("state").asText());
        assertEquals(
                good,
                owner.http()
                        .get(workflows + "/.github/workflows/good.yml")
                        .get("workflow")
                        .get("content")
                        .asText());
        String clone = owner.http()
                .get("/api/repos/" + repo)
                .get("repository")
                .get("clone_url")
                .asText();
        Path work = tmp.resolve("clone");
        git(owner).ok(tmp, "clone", "-q", clone, work.toString());
        assertEquals(good, Files.readString(work.resolve(".github/workflows/good.yml")), "PUT committed the file");
        assertEquals(
                200, owner.http().post(workflows + "/good.yml/sync", Map.of()).status());
        assertEquals(200, owner.http().post(workflows + "/sync-all", Map.of()).status());
        assertEquals(404, server.newUser().http().get(workflows).status());

        // a push of an unsupported key: refused by the server, the line in the pusher's terminal
        Files.writeString(
                work.resolve(".github/workflows/bad.yml"),
                "on: push\njobs:\n  a:\n    runs-on: busybox\n    container: node:20\n    steps:\n      - run: x\n");
        git(owner).ok(work, "add", "-A");
        git(owner).ok(work, "commit", "-q", "-m", "bad");
        GitClient.Result push = git(owner).run(work, "push", "origin", "main");
        assertTrue(push.exit() != 0, "the push was refused");
        assertTrue(push.err().contains("line 5") && push.err().contains("container"), push.err());
        // and so are an unsupported uses: and a YAML error, each with its line
        for (String[] bad : new String[][] {
            {
                "on: push\njobs:\n  a:\n    runs-on: busybox\n    steps:\n      - uses: docker/build-push-action@v6\n",
                "line 6",
                "docker/build-push-action@v6"
            },
            {"on: push\njobs:\n  a:\n    runs-on: busybox\n    steps: [unclosed\n", "line ", "invalid YAML"}
        }) {
            Files.writeString(work.resolve(".github/workflows/bad.yml"), bad[0]);
            git(owner).ok(work, "add", "-A");
            git(owner).ok(work, "commit", "-q", "--amend", "-m", "bad");
            GitClient.Result refused = git(owner).run(work, "push", "origin", "main");
            assertTrue(refused.exit() != 0, "the push was refused: " + refused.err());
            assertTrue(refused.err().contains(bad[1]) && refused.err().contains(bad[2]), refused.err());
        }
        assertEquals(1, owner.http().get(workflows).get("workflows").size());

        assertEquals(200, owner.http().delete(workflows + "/good.yml").status());
        assertEquals(404, owner.http().get(workflows + "/good.yml").status());
        assertEquals(400, owner.http().get(workflows + "/notes.txt").status(), "a workflow is a .yml or .yaml file");
    }

    @Test
    void aJobReachesNoHostServiceAndItsLinksLeadNothingOutOfTheWorkspace(AtriumServer server) throws Exception {
        User owner = server.newUser();
        int port = URI.create(server.base()).getPort();
        String hostAddress = java.net.InetAddress.getLocalHost().getHostAddress();
        String workflow = """
                on: push
                jobs:
                  probe:
                    runs-on: busybox
                    steps:
                      - run: |
                          if nc -w 2 127.0.0.1 5432 </dev/null; then echo REACHED-PG; else echo no-pg; fi
                          if printf 'GET /admin/health HTTP/1.0\\r\\n\\r\\n' | nc -w 2 127.0.0.1 PORT; then echo REACHED-ADMIN; else echo no-admin; fi
                          if nc -w 2 HOST PORT </dev/null; then echo REACHED-HOST; else echo no-host; fi
                          if nc -w 2 10.88.0.1 PORT </dev/null; then echo REACHED-BRIDGE; else echo no-bridge; fi
                          id -u
                          mkdir -p out && ln -s /etc/hostname out/host-file && echo mine > out/mine.txt
                          ln -s /etc/hostname linked.txt
                      - uses: actions/upload-artifact@v4
                        with:
                          name: out
                          path: |
                            out
                            linked.txt
                      - run: ln -s /tmp got
                      - uses: actions/download-artifact@v4
                        continue-on-error: true
                        with:
                          name: out
                          path: got/escaped
                """.replace("PORT", String.valueOf(port)).replace("HOST", hostAddress);
        String repo = pushed(owner, "ci-isolated", "private", ".github/workflows/probe.yml", workflow);
        JsonNode run = awaitRun(owner, repo, ActionsTest::completed, Duration.ofSeconds(60));
        JsonNode job = jobsByName(owner, repo, run.get("id").asText()).get("probe");
        String log = log(owner, repo, job.get("id").asText());
        assertTrue(
                log.contains("no-pg")
                        && log.contains("no-admin")
                        && log.contains("no-host")
                        && log.contains("no-bridge"),
                log);
        assertFalse(log.contains("\nREACHED"), log);
        assertTrue(log.contains("\n1000\n"), "the job runs as a non-root user: " + log);
        assertEquals("success", run.get("conclusion").asText(), log);
        JsonNode steps = job.get("steps");
        assertEquals(
                "failure", steps.get(3).get("conclusion").asText(), "a download through a link is refused: " + log);
        assertFalse(Files.exists(Path.of("/tmp/escaped")), "nothing was written outside the workspace");

        JsonNode art = owner.http()
                .get(runs(repo) + "/" + run.get("id").asText() + "/artifacts")
                .get("artifacts")
                .get(0);
        Map<String, String> files =
                unzip(download(owner, art.get("archive_download_url").asText()));
        assertEquals(Map.of("mine.txt", "mine\n"), files, "links are not followed out of the workspace");
    }

    static final String CACHE_WORKFLOW = """
            on: [push, workflow_dispatch]
            jobs:
              cached:
                runs-on: busybox
                steps:
                  - id: c
                    uses: actions/cache@v4
                    with:
                      key: deps-v1
                      restore-keys: deps-
                      path: deps
                  - run: |
                      echo "hit=${{ steps.c.outputs.cache-hit }}"
                      if [ -f deps/built.txt ]; then echo "restored $(cat deps/built.txt)"; else mkdir -p deps && echo once > deps/built.txt; fi
            """;

    @Test
    void aCacheSavedByOneRunIsRestoredByTheNext(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String repo = pushed(owner, "ci-cache", "private", ".github/workflows/cache.yml", CACHE_WORKFLOW);
        JsonNode first = awaitRun(owner, repo, ActionsTest::completed, Duration.ofSeconds(60));
        assertEquals("success", first.get("conclusion").asText());
        String log1 = log(
                owner,
                repo,
                jobsByName(owner, repo, first.get("id").asText())
                        .get("cached")
                        .get("id")
                        .asText());
        assertTrue(log1.contains("hit=false") && log1.contains("Cache saved with key: deps-v1"), log1);
        Http.Reply again = owner.http().post(runs(repo), Map.of("workflow", "cache.yml"));
        assertEquals(201, again.status(), again.body());
        JsonNode second = awaitRun(
                owner,
                repo,
                again.get("workflow_run").get("id").asText(),
                ActionsTest::completed,
                Duration.ofSeconds(60));
        String log2 = log(
                owner,
                repo,
                jobsByName(owner, repo, second.get("id").asText())
                        .get("cached")
                        .get("id")
                        .asText());
        assertTrue(log2.contains("hit=true") && log2.contains("restored once"), log2);
    }

    static final String GROUP_WORKFLOW = """
            on:
              workflow_dispatch:
                inputs:
                  pause:
                    required: true
            concurrency:
              group: deploy-${{ github.ref }}
              cancel-in-progress: true
            env:
              GREETING: hello
            jobs:
              make:
                runs-on: busybox
                outputs:
                  version: ${{ steps.v.outputs.version }}
                steps:
                  - id: v
                    run: echo "version=1.2.${{ inputs.pause }}" >> "$GITHUB_OUTPUT" && sleep ${{ inputs.pause }}
              use:
                needs: make
                runs-on: busybox
                defaults:
                  run:
                    working-directory: sub
                steps:
                  - run: mkdir -p sub
                    working-directory: .
                  - run: echo "$GREETING ${{ needs.make.outputs.version }} in $(pwd)"
            """;

    @Test
    void aNewRunOfAConcurrencyGroupCancelsTheOneInProgressAndOutputsReachTheJobsThatNeedThem(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        String repo = pushed(owner, "ci-group", "private", ".github/workflows/deploy.yml", GROUP_WORKFLOW);
        Http.Reply first =
                owner.http().post(runs(repo), Map.of("workflow", "deploy.yml", "inputs", Map.of("pause", "30")));
        assertEquals(201, first.status(), first.body());
        String firstId = first.get("workflow_run").get("id").asText();
        awaitRun(owner, repo, firstId, r -> r.get("status").asText().equals("in_progress"), Duration.ofSeconds(60));
        assertEquals(
                400,
                owner.http().post(runs(repo), Map.of("workflow", "deploy.yml")).status(),
                "a required input");
        Http.Reply second =
                owner.http().post(runs(repo), Map.of("workflow", "deploy.yml", "inputs", Map.of("pause", "0")));
        assertEquals(201, second.status(), second.body());
        JsonNode cancelled = awaitRun(owner, repo, firstId, ActionsTest::completed, Duration.ofSeconds(20));
        assertEquals("cancelled", cancelled.get("conclusion").asText(), cancelled.toString());
        JsonNode done = awaitRun(
                owner,
                repo,
                second.get("workflow_run").get("id").asText(),
                ActionsTest::completed,
                Duration.ofSeconds(60));
        assertEquals("success", done.get("conclusion").asText());
        Map<String, JsonNode> jobs = jobsByName(owner, repo, done.get("id").asText());
        assertEquals("1.2.0", jobs.get("make").get("outputs").get("version").asText());
        String log = log(owner, repo, jobs.get("use").get("id").asText());
        assertTrue(log.contains("hello 1.2.0 in /workspace/sub"), log);

        // the log in byte ranges, as the spec's offset and limit have it
        String jobId = jobs.get("use").get("id").asText();
        Http.Reply part = owner.http().get("/api/repos/" + repo + "/actions/jobs/" + jobId + "/logs?offset=3&limit=10");
        assertEquals(200, part.status());
        assertEquals(log.substring(3, 13), part.body());
        assertEquals(
                String.valueOf(log.length()),
                part.raw().headers().firstValue("X-Log-Size").orElse(""));
        assertEquals(
                400,
                owner.http()
                        .get("/api/repos/" + repo + "/actions/jobs/" + jobId + "/logs?offset=-1")
                        .status());
    }
}
