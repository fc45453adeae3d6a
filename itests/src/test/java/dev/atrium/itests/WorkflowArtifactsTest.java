package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.BundleContext;

/**
 * {@code WorkflowArtifacts} (actions.api), the service the app platform deploys workflow-built workers with, called as
 * another capability calls it: in the running framework (a service has no HTTP route), with a caller the kernel made.
 * The workflow really runs, in a podman container, at the commit asked for although the branch moved past it.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkflowArtifactsTest {

    static final String BUILD = ".atrium/workflows/build.yml";
    static final String BROKEN = ".atrium/workflows/broken.yml";
    static final String PUSH_ONLY = ".atrium/workflows/push-only.yml";

    static final String BUILD_WORKFLOW = """
            on: workflow_dispatch
            jobs:
              build:
                runs-on: busybox
                steps:
                  - uses: actions/checkout@v4
                  - run: mkdir -p dist && cp worker.js dist/ && echo "${{ github.sha }} ${{ github.ref }}" > dist/at.txt
                  - uses: actions/upload-artifact@v4
                    with:
                      name: worker
                      path: dist
            """;

    static final String BROKEN_WORKFLOW = """
            on: workflow_dispatch
            jobs:
              compile:
                runs-on: busybox
                steps:
                  - name: compile it
                    run: echo nope && exit 2
            """;

    static final String PUSH_ONLY_WORKFLOW = """
            on: push
            jobs:
              noop:
                runs-on: busybox
                steps:
                  - run: "true"
            """;

    InFrameworkRuntime runtime;
    String repoId;
    String first;
    String second;
    Object artifacts;
    Class<?> api;
    Object owner;
    Object stranger;

    @BeforeAll
    void start(@TempDir Path tmp) throws Exception {
        runtime = InFrameworkRuntime.start(tmp.resolve("runtime"));
        runtime.assertHealthy(90_000);
        Http operator = new Http(
                runtime.base(),
                Files.readString(runtime.data.resolve("operator.token")).trim());
        String ownerId = principal(operator, "builder");
        String strangerId = principal(operator, "onlooker");
        Http builder = operator.as(operator.post("/admin/users/builder/tokens", Map.of("scopes", "*"))
                .get("token")
                .asText());
        String space = builder.get("/api/spaces/builder").get("space").get("id").asText();
        Http.Reply repo = builder.post("/api/spaces/" + space + "/repos", Map.of("name", "site"));
        assertEquals(201, repo.status(), repo.body());
        repoId = repo.get("repository").get("id").asText();

        GitClient git = new GitClient(tmp.resolve("home"), builder.token());
        Path work = git.newWorkingCopy(
                tmp.resolve("work"),
                "worker.js",
                "export default 'first';\n",
                BUILD,
                BUILD_WORKFLOW,
                BROKEN,
                BROKEN_WORKFLOW,
                PUSH_ONLY,
                PUSH_ONLY_WORKFLOW);
        first = git.ok(work, "rev-parse", "HEAD");
        Files.writeString(work.resolve("worker.js"), "export default 'second';\n");
        git.ok(work, "commit", "-q", "-am", "second");
        second = git.ok(work, "rev-parse", "HEAD");
        git.ok(work, "push", "-q", repo.get("repository").get("clone_url").asText(), "main");

        // as the capabilities see them: the runs bundle is one the kernel lets act for a Principal
        BundleContext ctx = runtime.bundle("dev.atrium.runs").getBundleContext();
        api = runtime.bundle("dev.atrium.actions.api").loadClass("dev.atrium.actions.api.WorkflowArtifacts");
        artifacts = ctx.getService(ctx.getServiceReference(api.getName()));
        assertNotNull(artifacts, "no WorkflowArtifacts service");
        Object callers = ctx.getService(ctx.getServiceReference("dev.atrium.kernel.api.Callers"));
        Method actingFor = callers.getClass().getMethod("actingFor", String.class, Set.class);
        owner = actingFor.invoke(callers, ownerId, Set.of("repos:write"));
        stranger = actingFor.invoke(callers, strangerId, Set.of("repos:write"));
    }

    @AfterAll
    void stop() throws Exception {
        if (runtime != null) {
            runtime.close();
        }
    }

    private static String principal(Http operator, String username) {
        Http.Reply created = operator.post("/admin/users", Map.of("username", username));
        assertEquals(201, created.status(), created.body());
        return created.json().has("user")
                ? created.get("user").get("id").asText()
                : created.get("id").asText();
    }

    private Object call(String method, Object... args) throws Throwable {
        for (Method m : api.getMethods()) {
            if (m.getName().equals(method)) {
                try {
                    return m.invoke(artifacts, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }
        }
        throw new AssertionError("WorkflowArtifacts has no " + method);
    }

    private Object build(Object caller, String workflow, String commit, String job, String name, Duration timeout)
            throws Throwable {
        return call("build", caller, repoId, workflow, "main", commit, job, name, timeout);
    }

    /** The BuildFailed a build ends in: its message, and the run it names (null when none was started). */
    record Failed(String message, String runId) {}

    private Failed failed(Object caller, String workflow, String commit, String name, Duration timeout) {
        Throwable t = assertThrows(Throwable.class, () -> build(caller, workflow, commit, null, name, timeout));
        assertEquals("BuildFailed", t.getClass().getSimpleName(), String.valueOf(t));
        System.out.println("build failed: " + t.getMessage());
        try {
            return new Failed(
                    t.getMessage(), (String) t.getClass().getMethod("runId").invoke(t));
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static Object field(Object record, String name) throws ReflectiveOperationException {
        return record.getClass().getMethod(name).invoke(record);
    }

    private String read(Object artifact, String path, long max) throws Throwable {
        return new String((byte[]) call("read", artifact, path, max), StandardCharsets.UTF_8);
    }

    @Test
    void aBuildRunsTheWorkflowAtTheCommitAskedForAndNewestFindsItsArtifactThere() throws Throwable {
        assertEquals(
                Optional.empty(),
                call("newest", repoId, BUILD, first, "build", "worker"),
                "no run of it yet: the workflow takes workflow_dispatch only");
        // no ref: the default branch's, main
        Object built = call("build", owner, repoId, BUILD, null, first, "build", "worker", Duration.ofSeconds(120));
        assertEquals(first, field(built, "commitSha"), "run at the commit although main moved past it");
        assertEquals(BUILD, field(built, "workflowPath"));
        assertEquals("build", field(built, "jobName"));
        assertEquals("worker", field(built, "name"));
        assertEquals("export default 'first';\n", read(built, "worker.js", 1000));
        assertEquals(first + " refs/heads/main\n", read(built, "./at.txt", 1000));

        Optional<?> newest = (Optional<?>) call("newest", repoId, BUILD, first, "build", "worker");
        assertEquals(field(built, "id"), field(newest.orElseThrow(), "id"));
        assertEquals(field(built, "runId"), field(newest.orElseThrow(), "runId"));
        assertTrue(((Optional<?>) call("newest", repoId, BUILD, first, null, "worker")).isPresent(), "any job");
        assertEquals(Optional.empty(), call("newest", repoId, BUILD, first, "other", "worker"), "another job's");
        assertEquals(Optional.empty(), call("newest", repoId, BUILD, second, "build", "worker"), "another commit's");
        assertEquals(Optional.empty(), call("newest", repoId, BUILD, first, "build", "site"), "another name");

        IOException missing = assertThrows(IOException.class, () -> read(built, "dist/worker.js", 1000));
        assertTrue(missing.getMessage().contains("at.txt, worker.js"), missing.getMessage());
        IOException several = assertThrows(IOException.class, () -> read(built, null, 1000));
        assertTrue(several.getMessage().contains("2 files"), several.getMessage());
        IOException large = assertThrows(IOException.class, () -> read(built, "worker.js", 5));
        assertTrue(large.getMessage().contains("larger than 5 bytes"), large.getMessage());

        Failed none = failed(owner, BUILD, first, "site", Duration.ofSeconds(120));
        assertNotNull(none.runId());
        assertTrue(
                none.message().contains(none.runId())
                        && none.message().contains("no artifact named site")
                        && none.message().contains("worker (job build)"),
                none.message());
    }

    @Test
    void aFailedRunIsABuildFailureNamingTheRunItsJobAndStep() {
        Failed f = failed(owner, BROKEN, second, "worker", Duration.ofSeconds(120));
        assertNotNull(f.runId());
        assertTrue(
                f.message().contains(f.runId())
                        && f.message().contains("the job compile failed")
                        && f.message().contains("compile it"),
                f.message());
    }

    @Test
    void aRunThatOutlastsTheTimeoutIsABuildFailureNamingIt() {
        Failed f = failed(owner, BROKEN, first, "worker", Duration.ZERO);
        assertNotNull(f.runId());
        assertTrue(f.message().contains(f.runId()) && f.message().contains("did not finish within"), f.message());
    }

    @Test
    void whatCannotBeRunStartsNoRun() {
        Failed push = failed(owner, PUSH_ONLY, first, "worker", Duration.ofSeconds(10));
        assertNull(push.runId());
        assertTrue(push.message().contains("workflow_dispatch"), push.message());

        Failed unknown =
                failed(owner, BUILD, "0123456789abcdef0123456789abcdef01234567", "worker", Duration.ofSeconds(10));
        assertNull(unknown.runId(), unknown.message());
        assertTrue(unknown.message().contains("is not in the repository"), unknown.message());

        Failed notTheirs = failed(stranger, BUILD, first, "worker", Duration.ofSeconds(10));
        assertNull(notTheirs.runId(), notTheirs.message());
    }
}
