package dev.atrium.search.internal;

import dev.atrium.kernel.api.ApiException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One index/vectorize or index/rebuild per workspace per interval. */
final class RateLimits {

    /** Refused: the answer is 429 {@code RATE_LIMITED} with Retry-After. */
    static final class Limited extends ApiException {
        private static final long serialVersionUID = 1L;
        final long retryAfterSeconds;

        Limited(long retryAfterSeconds) {
            super(
                    429,
                    "RATE_LIMITED",
                    "the index of this workspace was worked on less than the interval ago; retry in "
                            + retryAfterSeconds + " s");
            this.retryAfterSeconds = retryAfterSeconds;
        }
    }

    private final Map<String, Long> last = new ConcurrentHashMap<>();

    void take(String spaceId, Duration interval) {
        long now = System.nanoTime();
        long[] wait = {0};
        last.compute(spaceId, (k, at) -> {
            if (at != null && now - at < interval.toNanos()) {
                wait[0] = Math.max(1, (interval.toNanos() - (now - at) + 999_999_999L) / 1_000_000_000L);
                return at;
            }
            return now;
        });
        if (wait[0] > 0) {
            throw new Limited(wait[0]);
        }
    }
}
