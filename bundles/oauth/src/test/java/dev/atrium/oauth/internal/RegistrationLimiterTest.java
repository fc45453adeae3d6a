package dev.atrium.oauth.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RegistrationLimiterTest {

    private final AtomicLong now = new AtomicLong(1_000_000);

    @Test
    void anAddressIsLimitedAndFreedAsItsOldestRegistrationLeavesTheHour() {
        RegistrationLimiter limiter = new RegistrationLimiter(2, 100, now::get);
        assertNull(limiter.attempt("192.0.2.1"));
        now.addAndGet(1000);
        assertNull(limiter.attempt("192.0.2.1"));
        RegistrationLimiter.Refusal r = limiter.attempt("192.0.2.1");
        assertNotNull(r);
        assertEquals(3599, r.retryAfterSeconds());
        assertNull(limiter.attempt("192.0.2.2"));
        now.addAndGet(RegistrationLimiter.WINDOW_MILLIS - 1000);
        assertNull(limiter.attempt("192.0.2.1"));
    }

    @Test
    void theWholeServerHasABudgetThatManyAddressesCannotExceed() {
        RegistrationLimiter limiter = new RegistrationLimiter(5, 10, now::get);
        for (int i = 0; i < 10; i++) {
            assertNull(limiter.attempt("198.51.100." + i));
        }
        RegistrationLimiter.Refusal r = limiter.attempt("198.51.100.200");
        assertNotNull(r);
        assertTrue(r.reason().contains("server"), r.reason());
    }

    @Test
    void anIpv6ClientCountsByItsSlash64() {
        assertEquals(
                RegistrationLimiter.key("2001:db8:1:2:aaaa::1"), RegistrationLimiter.key("2001:db8:1:2:ffff:1:2:3"));
        assertTrue(!RegistrationLimiter.key("2001:db8:1:2::1").equals(RegistrationLimiter.key("2001:db8:1:3::1")));
        assertEquals("10.1.2.3", RegistrationLimiter.key("::ffff:10.1.2.3"));
        RegistrationLimiter limiter = new RegistrationLimiter(1, 100, now::get);
        assertNull(limiter.attempt("2001:db8::1"));
        assertNotNull(limiter.attempt("2001:db8::abcd"));
    }
}
