package dev.atrium.threads.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SharePasswordsTest {

    private final AtomicLong now = new AtomicLong(1_000_000);

    @Test
    void aShareTokenIsStoredAsItsSha256InUnpaddedStandardBase64() {
        // the form every stored share's token_hash has: changing it would orphan every share link made so far
        assertEquals("ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0", ThreadStore.shareTokenHash("abc"));
    }

    private static ShareAccessLimiter.Limits limits(int perShare, int perAddress, int global) {
        return new ShareAccessLimiter.Limits(perShare, perAddress, global, 60_000, 1000, 0, 0);
    }

    @Test
    void anAddressIsRefusedForAShareOnceItHasTheLimitOfFailuresWhileOtherAddressesStillGetIn() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(limits(3, 100, 1000), 100, now::get);
        for (int i = 0; i < 3; i++) {
            assertEquals(0, limiter.attempt("shr_a", "198.51.100.1"), "attempt " + i);
            now.addAndGet(10_000);
        }
        // three failures at t, t+10 s, t+20 s; now t+30 s: the first leaves the window at t+60 s
        assertEquals(30, limiter.attempt("shr_a", "198.51.100.1"));
        assertEquals(0, limiter.attempt("shr_a", "203.0.113.9"), "the share is not locked for another address");
        assertEquals(0, limiter.attempt("shr_b", "198.51.100.1"), "another share is not limited for the guesser");
        now.addAndGet(30_000);
        assertEquals(0, limiter.attempt("shr_a", "198.51.100.1"), "the oldest failure has left the window");
    }

    @Test
    void aRightPasswordIsNotCountedAsAFailure() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(limits(2, 100, 1000), 100, now::get);
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
        ShareAccessLimiter limiter = new ShareAccessLimiter(limits(100, 4, 1000), 100, now::get);
        for (int i = 0; i < 4; i++) {
            assertEquals(0, limiter.attempt("shr_" + i, "192.0.2.7"));
        }
        assertEquals(60, limiter.attempt("shr_new", "192.0.2.7"));
        assertEquals(0, limiter.attempt("shr_new", "192.0.2.8"));
    }

    @Test
    void theWholeServerHasABudgetThatManyAddressesCannotExceed() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(limits(10, 10, 5), 100, now::get);
        for (int i = 0; i < 5; i++) {
            assertEquals(0, limiter.attempt("shr_a", "10.0.0." + i));
        }
        assertTrue(limiter.attempt("shr_a", "10.0.0.99") > 0);
        now.addAndGet(60_000);
        assertEquals(0, limiter.attempt("shr_a", "10.0.0.99"));
    }

    @Test
    void anAddressWaitsLongerAfterEachFailureOnceItHasFailedAFewTimes() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(
                new ShareAccessLimiter.Limits(100, 100, 1000, 600_000, 2, 1000, 8000), 100, now::get);
        assertEquals(0, limiter.attempt("shr_a", "192.0.2.9"));
        assertEquals(0, limiter.attempt("shr_a", "192.0.2.9"));
        long[] expected = {1, 2, 4, 8, 8};
        for (long seconds : expected) {
            assertEquals(seconds, limiter.attempt("shr_a", "192.0.2.9"), "delay after another failure");
            assertEquals(0, limiter.attempt("shr_a", "192.0.2.10"), "another address does not wait");
            now.addAndGet(seconds * 1000);
            assertEquals(0, limiter.attempt("shr_a", "192.0.2.9"));
        }
    }

    @Test
    void manyTokensAndAddressesKeepAtMostTheCapOfKeys() {
        ShareAccessLimiter limiter = new ShareAccessLimiter(limits(10, 10, 1_000_000), 50, now::get);
        for (int i = 0; i < 10_000; i++) {
            limiter.attempt("shr_" + i, "10.0." + (i / 256) + "." + (i % 256));
        }
        assertTrue(limiter.keys() <= 50, "keys: " + limiter.keys());
        for (int i = 0; i < 10; i++) {
            assertEquals(0, limiter.attempt("shr_9999", "192.0.2.1"));
        }
        assertTrue(limiter.attempt("shr_9999", "192.0.2.1") > 0);
    }
}
