package dev.atrium.services.bindings.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WorkflowPacingTest {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final WorkflowPacing pacing = new WorkflowPacing(now::get);

    private void advance(long millis) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    /** Milliseconds, in ticks of the engine, until the binding is due again. */
    private long wait(String service, String binding) {
        long waited = 0;
        while (!pacing.due(service, binding)) {
            advance(WorkflowEngine.TICK_MILLIS);
            waited += WorkflowEngine.TICK_MILLIS;
        }
        return waited;
    }

    @Test
    void aBindingWithNothingToClaimIsAskedLessAndLessOftenUpToEveryTwoSeconds() {
        assertTrue(pacing.due("svc", "FLOW"), "a binding never asked is due at once");
        long[] expected = {200, 400, 800, 1600, 2000, 2000};
        for (long e : expected) {
            pacing.claimed("svc", "FLOW", false);
            assertEquals(e, wait("svc", "FLOW"));
        }
    }

    @Test
    void aClaimThatFoundWorkKeepsTheBindingAtEveryTick() {
        for (int i = 0; i < 5; i++) {
            pacing.claimed("svc", "FLOW", false);
            wait("svc", "FLOW");
        }
        pacing.claimed("svc", "FLOW", true);
        assertEquals(WorkflowEngine.TICK_MILLIS, wait("svc", "FLOW"));
        pacing.claimed("svc", "FLOW", true);
        assertEquals(WorkflowEngine.TICK_MILLIS, wait("svc", "FLOW"));
    }

    @Test
    void aNudgeMakesAnIdleBindingDueAtOnceAndOnlyThatBinding() {
        for (int i = 0; i < 5; i++) {
            pacing.claimed("svc", "FLOW", false);
            pacing.claimed("svc", "OTHER", false);
            pacing.claimed("other-svc", "FLOW", false);
            wait("svc", "FLOW");
        }
        pacing.claimed("svc", "FLOW", false);
        pacing.claimed("svc", "OTHER", false);
        pacing.claimed("other-svc", "FLOW", false);
        assertFalse(pacing.due("svc", "FLOW"));
        pacing.nudge("svc", "FLOW");
        assertTrue(pacing.due("svc", "FLOW"));
        assertFalse(pacing.due("svc", "OTHER"));
        assertFalse(pacing.due("other-svc", "FLOW"));
        pacing.claimed("svc", "FLOW", false);
        assertEquals(WorkflowEngine.TICK_MILLIS, wait("svc", "FLOW"), "the fast pace starts over after a nudge");
    }

    @Test
    void bindingsOfServicesNoLongerRunAreForgotten() {
        pacing.claimed("gone", "FLOW", false);
        pacing.claimed("kept", "FLOW", false);
        pacing.retain(Set.of("kept"));
        assertTrue(pacing.due("gone", "FLOW"), "forgotten: due at once if the service comes back");
        assertFalse(pacing.due("kept", "FLOW"));
    }
}
