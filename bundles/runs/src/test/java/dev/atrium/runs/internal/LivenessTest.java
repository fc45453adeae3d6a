package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LivenessTest {

    static final long S = 1_000_000_000L;

    @Test
    void anInstanceIsDeadOnlyWhenItsLockStaysFreeOnReapsSomeSecondsApart() {
        EventHub.Liveness l = new EventHub.Liveness(4 * S);
        assertEquals(List.of(), l.dead(Set.of("a"), 0), "one free look is a reconnecting listener, not a dead process");
        assertEquals(List.of(), l.dead(Set.of("a"), 3 * S), "not yet long enough");
        assertEquals(List.of("a"), l.dead(Set.of("a"), 5 * S));
        assertEquals(List.of(), l.dead(Set.of("a"), 6 * S), "reported once, then watched afresh");
    }

    @Test
    void anInstanceThatHoldsItsLockAgainStartsOver() {
        EventHub.Liveness l = new EventHub.Liveness(4 * S);
        assertEquals(List.of(), l.dead(Set.of("a", "b"), 0));
        assertEquals(List.of("b"), l.dead(Set.of("b"), 5 * S), "a holds its lock again; b stayed free");
        assertEquals(List.of(), l.dead(Set.of("a"), 10 * S), "a is free again, but only since now");
        assertEquals(List.of("a"), l.dead(Set.of("a"), 15 * S));
    }
}
