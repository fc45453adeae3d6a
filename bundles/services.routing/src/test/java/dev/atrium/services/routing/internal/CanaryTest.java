package dev.atrium.services.routing.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CanaryTest {

    @Test
    void canaryTakesItsShareOfRequestsPerRequest() {
        // the measure: 10% of 2,000 requests, within 3 points, with any seed
        for (long seed = 1; seed <= 50; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            int canary = 0;
            for (int i = 0; i < 2000; i++) {
                if (Canary.pick(10, random)) {
                    canary++;
                }
            }
            assertTrue(canary >= 140 && canary <= 260, "seed " + seed + ": " + canary + " of 2000");
        }
        assertFalse(Canary.pick(0, new Random(1)));
        assertTrue(Canary.pick(100, new Random(1)));
    }
}
