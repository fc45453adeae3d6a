package dev.atrium.kernel.internal.domain;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class NamesTest {

    @Test
    void goodHandlesPass() {
        for (String ok : new String[] {"alice", "a1", "my-notes", "x9-y8-z7"}) {
            assertNull(Names.formProblem("username", ok, 2, 39), ok);
        }
    }

    @Test
    void malformedReservedAndOutOfRangeHandlesAreRefused() {
        for (String bad : new String[] {"Alice", "-a", "a-", "a--b", "a_b", "a b", "ä", "admin", "api", "ab"}) {
            assertNotNull(Names.formProblem("username", bad, 3, 39), bad);
        }
        assertNotNull(Names.formProblem("slug", "x".repeat(64), 1, 63));
    }
}
