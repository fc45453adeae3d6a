package dev.atrium.kernel.internal.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * JAX-RS resources the whiteboard has neither served nor failed for too long while it was quiet.
 * <p>
 * Rarely (about once in several hundred starts of the in-framework runtime under load) Aries leaves a registered resource
 * out of its runtime entirely: not served, not listed as failed, and nothing later makes it look again, so the server
 * would never be ready. A resource that has stayed unlisted for the grace time while the whiteboard's change count
 * stood still for that long is reported once, so that it can be registered again (which the whiteboard does see).
 * Only the resource's own service id is remembered: a registration made again has a new id and a fresh grace time.
 */
final class UnlistedResources {

    private final long graceNanos;
    private final Map<Long, Long> firstSeen = new HashMap<>();
    private final Set<Long> reported = new HashSet<>();

    UnlistedResources(long graceNanos) {
        this.graceNanos = graceNanos;
    }

    /**
     * Records which resources are unlisted now and returns those to register again: unlisted since at least the grace
     * time, with the whiteboard unchanged since at least as long ({@code quietSinceNanos}), and not reported before.
     */
    synchronized List<Long> observe(Set<Long> unlisted, long now, long quietSinceNanos) {
        firstSeen.keySet().retainAll(unlisted);
        reported.retainAll(unlisted);
        List<Long> due = new ArrayList<>();
        for (Long id : unlisted) {
            long since = firstSeen.computeIfAbsent(id, k -> now);
            if (now - since >= graceNanos && now - quietSinceNanos >= graceNanos && reported.add(id)) {
                due.add(id);
            }
        }
        return due;
    }
}
