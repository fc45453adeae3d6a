package dev.atrium.threads.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class SharePasswordsTest {

    private final AtomicLong now = new AtomicLong(1_000_000);

    @Test
    void passwordHashesAreSaltedAndVerify() {
        String a = Passwords.hash("correct horse");
        String b = Passwords.hash("correct horse");
        assertNotEquals(a, b);
        assertTrue(a.startsWith("pbkdf2-sha256$" + Passwords.ITERATIONS + "$"));
        assertTrue(Passwords.verify("correct horse", a));
        assertFalse(Passwords.verify("correct horsf", a));
        assertFalse(Passwords.verify("x", "garbage"));
    }

    @Test
    void aShareRefusesAttemptsOnceItHasTheLimitOfFailuresUntilTheOldestLeavesTheWindow() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(3, 100, 60_000, 100, now::get);
        for (int i = 0; i < 3; i++) {
            assertEquals(0, limiter.attempt("shr_a", "198.51.100." + i), "attempt " + i);
            now.addAndGet(10_000);
        }
        // three failures at t, t+10 s, t+20 s; now t+30 s: the first leaves the window at t+60 s
        assertEquals(30, limiter.attempt("shr_a", "203.0.113.9"));
        assertEquals(0, limiter.attempt("shr_b", "203.0.113.9"), "another share is not limited");
        now.addAndGet(30_000);
        assertEquals(0, limiter.attempt("shr_a", "203.0.113.9"), "the oldest failure has left the window");
        assertEquals(10, limiter.attempt("shr_a", "203.0.113.10"));
    }

    @Test
    void aRightPasswordIsNotCountedAsAFailure() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(2, 100, 60_000, 100, now::get);
        for (int i = 0; i < 10; i++) {
            assertEquals(0, limiter.attempt("shr_a", "192.0.2.1"));
            limiter.succeeded("shr_a", "192.0.2.1");
        }
        assertEquals(0, limiter.keys(), "nothing is kept for attempts that succeeded");
        assertEquals(0, limiter.attempt("shr_a", "192.0.2.1"));
        assertEquals(0, limiter.attempt("shr_a", "192.0.2.1"));
        assertTrue(limiter.attempt("shr_a", "192.0.2.1") > 0);
    }

    @Test
    void oneAddressIsLimitedOverAllSharesAndOthersAreNot() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(100, 4, 60_000, 100, now::get);
        for (int i = 0; i < 4; i++) {
            assertEquals(0, limiter.attempt("shr_" + i, "192.0.2.7"));
        }
        assertEquals(60, limiter.attempt("shr_new", "192.0.2.7"));
        assertEquals(0, limiter.attempt("shr_new", "192.0.2.8"));
    }

    @Test
    void manyTokensAndAddressesKeepAtMostTheCapOfKeys() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(10, 10, 60_000, 50, now::get);
        for (int i = 0; i < 10_000; i++) {
            limiter.attempt("shr_" + i, "10.0." + (i / 256) + "." + (i % 256));
        }
        assertTrue(limiter.keys() <= 100, "keys: " + limiter.keys());
        // the most recent keys are the ones kept
        for (int i = 0; i < 9; i++) {
            assertEquals(0, limiter.attempt("shr_9999", "192.0.2.1"));
        }
        assertTrue(limiter.attempt("shr_9999", "192.0.2.1") > 0);
    }
}
