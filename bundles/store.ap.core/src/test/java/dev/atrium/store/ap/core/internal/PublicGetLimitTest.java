package dev.atrium.store.ap.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import org.junit.jupiter.api.Test;

/** The token bucket behind the public GET limit: a burst, then a steady rate, per client address. */
class PublicGetLimitTest {

    static PublicGetLimit limit(int perMinute, int burst) {
        return new PublicGetLimit(new PublicGetLimit.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return PublicGetLimit.Config.class;
            }

            @Override
            public int perMinute() {
                return perMinute;
            }

            @Override
            public int burst() {
                return burst;
            }
        });
    }

    @Test
    void aBurstThenOneRequestPerIntervalAndEachAddressHasItsOwn() {
        PublicGetLimit l = limit(60, 3);
        long t = 1_000_000_000L;
        for (int i = 0; i < 3; i++) {
            assertEquals(0, l.take("10.0.0.1", t));
        }
        assertEquals(1, l.take("10.0.0.1", t), "one a second: the next token in 1 s");
        assertEquals(0, l.take("10.0.0.2", t), "another address has its own bucket");
        assertEquals(0, l.take("10.0.0.1", t + 1_000_000_000L));
        assertEquals(1, l.take("10.0.0.1", t + 1_000_000_000L));
        assertEquals(0, l.take("10.0.0.1", t + 1_000_000_000_000L));
    }

    @Test
    void retryAfterIsTheWholeSecondsUntilTheNextToken() {
        PublicGetLimit l = limit(2, 1);
        assertEquals(0, l.take("a", 0));
        long wait = l.take("a", 0);
        assertTrue(wait == 30, "two a minute: 30 s, got " + wait);
    }

    @Test
    void zeroSwitchesItOff() {
        PublicGetLimit l = limit(0, 1);
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, l.take("a", 0));
        }
    }
}
