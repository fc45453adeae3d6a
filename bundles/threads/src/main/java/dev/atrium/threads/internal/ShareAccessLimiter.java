package dev.atrium.threads.internal;

import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Counts wrong share passwords, per share and per client address, over a sliding window: once either has reached
 * its limit, further attempts are refused without hashing (each costs a PBKDF2 of 210,000 iterations) until the
 * oldest failure leaves the window. An attempt counts as a failure from the moment it starts, so concurrent guesses
 * cannot overshoot the limit; a right password takes its count back. Each map keeps at most {@link #MAX_KEYS} keys,
 * dropping the least recently used, and each key at most its limit of timestamps: memory stays bounded whatever
 * tokens or addresses are sent.
 */
@Component(service = ShareAccessLimiter.class)
public class ShareAccessLimiter {

    static final int MAX_KEYS = 10_000;

    private final int maxPerShare;
    private final int maxPerAddress;
    private final long windowMillis;
    private final LongSupplier clock;
    private final Map<String, ArrayDeque<Long>> shares;
    private final Map<String, ArrayDeque<Long>> addresses;

    @Activate
    public ShareAccessLimiter(@Reference ThreadsSettings settings) {
        this(settings.shareMaxFailures, settings.shareMaxAddressFailures, settings.shareFailureWindowSeconds * 1000, MAX_KEYS,
                System::currentTimeMillis);
    }

    ShareAccessLimiter(int maxPerShare, int maxPerAddress, long windowMillis, int maxKeys, LongSupplier clock) {
        this.maxPerShare = maxPerShare;
        this.maxPerAddress = maxPerAddress;
        this.windowMillis = windowMillis;
        this.clock = clock;
        this.shares = lru(maxKeys);
        this.addresses = lru(maxKeys);
    }

    /**
     * Starts a password attempt on {@code shareId} from {@code address}.
     *
     * @return 0 when the attempt may go ahead (it counts as a failure until {@link #succeeded}), else the seconds until
     *         one may
     */
    synchronized long attempt(String shareId, String address) {
        long now = clock.getAsLong();
        long wait = Math.max(wait(shares, shareId, maxPerShare, now), wait(addresses, address, maxPerAddress, now));
        if (wait > 0) {
            return Math.max(1, (wait + 999) / 1000);
        }
        shares.computeIfAbsent(shareId, k -> new ArrayDeque<>()).addLast(now);
        addresses.computeIfAbsent(address, k -> new ArrayDeque<>()).addLast(now);
        return 0;
    }

    /** The attempt had the right password: it is not a failure. */
    synchronized void succeeded(String shareId, String address) {
        takeBack(shares, shareId);
        takeBack(addresses, address);
    }

    synchronized int keys() {
        return shares.size() + addresses.size();
    }

    /** Milliseconds until {@code key} is below {@code max} failures in the window; 0 when it is. */
    private long wait(Map<String, ArrayDeque<Long>> map, String key, int max, long now) {
        ArrayDeque<Long> failures = map.get(key);
        if (failures == null) {
            return 0;
        }
        while (!failures.isEmpty() && failures.peekFirst() <= now - windowMillis) {
            failures.pollFirst();
        }
        if (failures.isEmpty()) {
            map.remove(key);
            return 0;
        }
        return failures.size() < max ? 0 : failures.peekFirst() + windowMillis - now;
    }

    private static void takeBack(Map<String, ArrayDeque<Long>> map, String key) {
        ArrayDeque<Long> failures = map.get(key);
        if (failures != null) {
            failures.pollLast();
            if (failures.isEmpty()) {
                map.remove(key);
            }
        }
    }

    private static Map<String, ArrayDeque<Long>> lru(int maxKeys) {
        return new LinkedHashMap<>(64, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, ArrayDeque<Long>> eldest) {
                return size() > maxKeys;
            }
        };
    }
}
