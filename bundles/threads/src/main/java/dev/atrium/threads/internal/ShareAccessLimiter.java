package dev.atrium.threads.internal;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Limits the guesser, not the share: wrong share passwords are counted per client address, over a sliding window,
 * for each share and over all shares, with a growing delay between one address's attempts, and over the whole
 * server. A share is never locked for everyone: its rightful reader, from another address, still gets in while one
 * address is refused (before this, ten wrong guesses from anywhere locked the share for 15 minutes). Refused
 * attempts cost no hashing (each costs a PBKDF2 of 600,000 iterations, 210,000 for a share made before the hasher
 * moved to kernel.api). An attempt counts as a failure from the moment it starts, so concurrent guesses cannot overshoot a limit; a right password takes its count back. Memory
 * stays bounded: at most {@link #MAX_KEYS} addresses (the least recently used dropped), each holding at most its
 * limit of times, and the server-wide count at most its budget.
 */
@Component(service = ShareAccessLimiter.class)
public class ShareAccessLimiter {

    static final int MAX_KEYS = 10_000;

    /** The limits; delays grow from {@code delayBaseMillis} doubling per failure after {@code delayAfter} failures. */
    record Limits(
            int perShare,
            int perAddress,
            int global,
            long windowMillis,
            int delayAfter,
            long delayBaseMillis,
            long delayMaxMillis) {}

    /** One address's failures: all of them, by share, and when the last was. */
    private static final class Address {
        final ArrayDeque<Long> all = new ArrayDeque<>();
        final Map<String, ArrayDeque<Long>> byShare = new HashMap<>();
        long last;
    }

    private final Limits limits;
    private final LongSupplier clock;
    private final ArrayDeque<Long> global = new ArrayDeque<>();
    private final Map<String, Address> addresses;

    @Activate
    public ShareAccessLimiter(@Reference ThreadsSettings settings) {
        this(
                new Limits(
                        settings.shareMaxFailures,
                        settings.shareMaxAddressFailures,
                        settings.shareMaxGlobalFailures,
                        settings.shareFailureWindowSeconds * 1000,
                        settings.shareDelayAfterFailures,
                        settings.shareDelayBaseMillis,
                        settings.shareDelayMaxSeconds * 1000),
                MAX_KEYS,
                System::currentTimeMillis);
    }

    ShareAccessLimiter(Limits limits, int maxKeys, LongSupplier clock) {
        this.limits = limits;
        this.clock = clock;
        this.addresses = new LinkedHashMap<>(64, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Address> eldest) {
                return size() > maxKeys;
            }
        };
    }

    /**
     * Starts a password attempt on {@code shareId} from {@code address}.
     *
     * @return 0 when the attempt may go ahead (it counts as a failure until {@link #succeeded}), else the seconds until
     *         one may
     */
    synchronized long attempt(String shareId, String address) {
        long now = clock.getAsLong();
        expire(global, now);
        Address a = addresses.computeIfAbsent(address, k -> new Address());
        expire(a.all, now);
        a.byShare.values().forEach(times -> expire(times, now));
        a.byShare.values().removeIf(ArrayDeque::isEmpty);
        ArrayDeque<Long> share = a.byShare.computeIfAbsent(shareId, k -> new ArrayDeque<>());
        long wait = Math.max(full(share, limits.perShare(), now), full(a.all, limits.perAddress(), now));
        wait = Math.max(wait, full(global, limits.global(), now));
        int failures = a.all.size();
        if (failures >= limits.delayAfter() && limits.delayBaseMillis() > 0) {
            int doublings = Math.min(30, failures - limits.delayAfter());
            long delay = Math.min(limits.delayMaxMillis(), limits.delayBaseMillis() << doublings);
            wait = Math.max(wait, a.last + delay - now);
        }
        if (wait > 0) {
            if (share.isEmpty()) {
                a.byShare.remove(shareId);
            }
            return Math.max(1, (wait + 999) / 1000);
        }
        share.addLast(now);
        a.all.addLast(now);
        a.last = now;
        global.addLast(now);
        return 0;
    }

    /** The attempt had the right password: it is not a failure. */
    synchronized void succeeded(String shareId, String address) {
        Address a = addresses.get(address);
        if (a != null) {
            a.all.pollLast();
            ArrayDeque<Long> share = a.byShare.get(shareId);
            if (share != null) {
                share.pollLast();
                if (share.isEmpty()) {
                    a.byShare.remove(shareId);
                }
            }
            if (a.all.isEmpty()) {
                addresses.remove(address);
            }
        }
        global.pollLast();
    }

    synchronized int keys() {
        return addresses.size();
    }

    private void expire(ArrayDeque<Long> times, long now) {
        while (!times.isEmpty() && times.peekFirst() <= now - limits.windowMillis()) {
            times.pollFirst();
        }
    }

    /** Milliseconds until {@code times} holds fewer than {@code max}; 0 when it does. */
    private long full(ArrayDeque<Long> times, int max, long now) {
        return times.size() < max ? 0 : times.peekFirst() + limits.windowMillis() - now;
    }
}
