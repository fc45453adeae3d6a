package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UnlistedResourcesTest {

    private static final long S = 1_000_000_000L;

    @Test
    void aResourceUnlistedForTheGraceTimeOnAQuietWhiteboardIsReportedOnce() {
        UnlistedResources r = new UnlistedResources(3 * S);
        assertEquals(List.of(), r.observe(Set.of(7L), 0, 0));
        assertEquals(List.of(), r.observe(Set.of(7L), 2 * S, 0));
        assertEquals(List.of(7L), r.observe(Set.of(7L), 3 * S, 0));
        assertEquals(List.of(), r.observe(Set.of(7L), 10 * S, 0));
    }

    @Test
    void nothingIsReportedWhileTheWhiteboardKeepsChanging() {
        UnlistedResources r = new UnlistedResources(3 * S);
        r.observe(Set.of(7L), 0, 0);
        assertEquals(List.of(), r.observe(Set.of(7L), 4 * S, 2 * S));
        assertEquals(List.of(7L), r.observe(Set.of(7L), 5 * S, 2 * S));
    }

    @Test
    void aResourceListedInBetweenStartsItsGraceTimeAgain() {
        UnlistedResources r = new UnlistedResources(3 * S);
        r.observe(Set.of(7L), 0, 0);
        r.observe(Set.of(), 2 * S, 0);
        assertEquals(List.of(), r.observe(Set.of(7L), 4 * S, 0));
        assertEquals(List.of(7L), r.observe(Set.of(7L), 7 * S, 0));
    }
}
