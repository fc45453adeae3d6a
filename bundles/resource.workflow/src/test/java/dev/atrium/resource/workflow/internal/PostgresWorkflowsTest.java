package dev.atrium.resource.workflow.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.TestResourceContext;
import dev.atrium.resource.api.WorkflowFacet.Claim;
import dev.atrium.resource.api.WorkflowFacet.Control;
import dev.atrium.resource.api.WorkflowFacet.Retries;
import dev.atrium.resource.api.WorkflowFacet.StepAnswer.Action;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The workflow store on a fresh database of the machine's PostgreSQL, with the bundle's own migration. */
class PostgresWorkflowsTest {

    private static TestPostgres database;
    private static PostgresWorkflows provider;

    @BeforeAll
    static void createDatabase() throws Exception {
        database = TestPostgres.create("atrium_workflow");
        provider = new PostgresWorkflows(
                database.dataSource(),
                database.migrations(PostgresWorkflows.class, "/db/migration/V1__workflow.sql"),
                TestPostgres.noBundleContext());
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        database.close();
    }

    private TestResourceContext resource() throws ResourceException {
        TestResourceContext ctx = new TestResourceContext(
                database.dataSource(), null, provider.configSchema().validate(Map.of("class_name", "MyWorkflow")));
        provider.provision(ctx);
        return ctx;
    }

    @Test
    void aClassNameThatIsNotAJavaScriptIdentifierIsRefused() {
        for (String bad : List.of("", "1abc", "a-b", "a b", "x".repeat(101))) {
            ResourceException e =
                    assertThrows(ResourceException.class, () -> PostgresWorkflows.checkClassName(bad), bad);
            assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
        }
        assertThrows(ResourceException.class, () -> provider.configSchema().validate(Map.of()));
    }

    @Test
    void aStepRunsOnceItsResultIsReplayedAndTheInstanceCompletes() throws Exception {
        TestResourceContext ctx = resource();
        assertEquals("queued", provider.create(ctx, "svc", "one", "{\"x\":1}").status());
        ResourceException dup = assertThrows(ResourceException.class, () -> provider.create(ctx, "svc", "one", null));
        assertEquals(ResourceException.Kind.CONFLICT, dup.kind());
        assertTrue(
                provider.claim(ctx, "other", 10, Duration.ofSeconds(30)).isEmpty(), "another runner does not take it");
        List<Claim> claims = provider.claim(ctx, "svc", 10, Duration.ofSeconds(30));
        assertEquals(1, claims.size());
        assertEquals("{\"x\":1}", claims.get(0).paramsJson());
        assertTrue(
                provider.claim(ctx, "svc", 10, Duration.ofSeconds(30)).isEmpty(),
                "a leased instance is not claimed twice");
        String lease = claims.get(0).lease();
        var begin = provider.beginStep(ctx, "one", lease, "do:1:a");
        assertEquals(Action.RUN, begin.action());
        assertEquals(1, begin.attempt());
        assertEquals(
                Action.REPLAY,
                provider.completeStep(ctx, "one", lease, "do:1:a", "42").action());
        var again = provider.beginStep(ctx, "one", lease, "do:1:a");
        assertEquals(Action.REPLAY, again.action());
        assertEquals("42", again.valueJson());
        assertEquals(
                Action.ABORT,
                provider.beginStep(ctx, "one", "00000000-0000-0000-0000-000000000000", "do:1:b")
                        .action());
        assertTrue(provider.finish(ctx, "one", lease, "{\"ok\":true}", null, null));
        var done = provider.get(ctx, "one").orElseThrow();
        assertEquals("complete", done.status());
        assertEquals("{\"ok\":true}", done.outputJson());
        assertFalse(provider.finish(ctx, "one", lease, "1", null, null));
    }

    @Test
    void aFailedStepIsRetriedWithinItsLimitThenFailsForGood() throws Exception {
        TestResourceContext ctx = resource();
        provider.create(ctx, "svc", "r", null);
        String lease =
                provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).get(0).lease();
        Retries retries = new Retries(1, 10, "constant");
        assertEquals(Action.RUN, provider.beginStep(ctx, "r", lease, "do:1:x").action());
        var wait = provider.failStep(ctx, "r", lease, "do:1:x", "Error", "boom", true, retries);
        assertEquals(Action.WAIT, wait.action());
        Thread.sleep(20);
        var second = provider.beginStep(ctx, "r", lease, "do:1:x");
        assertEquals(Action.RUN, second.action());
        assertEquals(2, second.attempt());
        var thrown = provider.failStep(ctx, "r", lease, "do:1:x", "Error", "boom 2", true, retries);
        assertEquals(Action.THROW, thrown.action());
        assertEquals("boom 2", thrown.errorMessage());
        assertEquals(Action.THROW, provider.beginStep(ctx, "r", lease, "do:1:x").action(), "the failure is replayed");
        assertTrue(provider.finish(ctx, "r", lease, null, "Error", "boom 2"));
        assertEquals("errored", provider.get(ctx, "r").orElseThrow().status());
    }

    @Test
    void aSleepSuspendsTheRunUntilItsDeadline() throws Exception {
        TestResourceContext ctx = resource();
        provider.create(ctx, "svc", "s", null);
        String lease =
                provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).get(0).lease();
        assertEquals(
                Action.SUSPEND,
                provider.sleep(ctx, "s", lease, "sleep:1:nap", Instant.now().plusMillis(300))
                        .action());
        assertEquals("waiting", provider.get(ctx, "s").orElseThrow().status());
        assertEquals(
                Action.ABORT,
                provider.beginStep(ctx, "s", lease, "do:1:after").action(),
                "the suspended run owns nothing");
        assertTrue(provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).isEmpty(), "not due yet");
        Thread.sleep(400);
        String next =
                provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).get(0).lease();
        assertEquals(
                Action.REPLAY,
                provider.sleep(ctx, "s", next, "sleep:1:nap", Instant.now().plusSeconds(100))
                        .action(),
                "the first deadline holds");
    }

    @Test
    void aLongRetryDelaySuspendsAndAReleasedRunIsDueAtOnce() throws Exception {
        TestResourceContext ctx = resource();
        provider.create(ctx, "svc", "l", null);
        String lease =
                provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).get(0).lease();
        provider.beginStep(ctx, "l", lease, "do:1:x");
        assertEquals(
                Action.SUSPEND,
                provider.failStep(
                                ctx, "l", lease, "do:1:x", "Error", "slow", true, new Retries(5, 10_000, "exponential"))
                        .action());
        assertEquals("waiting", provider.get(ctx, "l").orElseThrow().status());
        provider.create(ctx, "svc", "rel", null);
        String l2 = provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).get(0).lease();
        provider.release(ctx, "rel", l2);
        assertEquals(
                "rel",
                provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).get(0).instanceId());
    }

    @Test
    void pauseResumeTerminateRestartAndDelete() throws Exception {
        TestResourceContext ctx = resource();
        provider.create(ctx, "svc", "c", null);
        provider.control(ctx, "c", Control.PAUSE);
        assertEquals("paused", provider.get(ctx, "c").orElseThrow().status());
        assertTrue(provider.claim(ctx, "svc", 1, Duration.ofSeconds(30)).isEmpty());
        provider.control(ctx, "c", Control.RESUME);
        assertEquals("queued", provider.get(ctx, "c").orElseThrow().status());
        provider.control(ctx, "c", Control.TERMINATE);
        assertEquals("terminated", provider.get(ctx, "c").orElseThrow().status());
        assertEquals(
                ResourceException.Kind.CONFLICT,
                assertThrows(ResourceException.class, () -> provider.control(ctx, "c", Control.TERMINATE))
                        .kind());
        provider.control(ctx, "c", Control.RESTART);
        assertEquals("queued", provider.get(ctx, "c").orElseThrow().status());
        provider.control(ctx, "c", Control.DELETE);
        assertTrue(provider.get(ctx, "c").isEmpty());
        assertEquals(
                ResourceException.Kind.NOT_FOUND,
                assertThrows(ResourceException.class, () -> provider.control(ctx, "c", Control.PAUSE))
                        .kind());
    }

    @Test
    void backoffsAreCloudflares() {
        assertEquals(100, PostgresWorkflows.delay(new Retries(5, 100, "constant"), 3));
        assertEquals(300, PostgresWorkflows.delay(new Retries(5, 100, "linear"), 3));
        assertEquals(400, PostgresWorkflows.delay(new Retries(5, 100, "exponential"), 3));
    }
}
