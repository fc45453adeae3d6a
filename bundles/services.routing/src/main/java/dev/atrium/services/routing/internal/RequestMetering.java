package dev.atrium.services.routing.internal;

import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.services.api.ServiceRoutes.Target;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Requests the router served, for billing: counted in memory per deployment and written as one usage event per
 * deployment a second. A usage event per request would cost the proxy a file write and a lock each (about 2.5 µs,
 * measured); the price is that a process killed outright loses at most its last second of counts.
 */
final class RequestMetering {

    private static final String SEPARATOR = "\n";

    private final Map<String, LongAdder> pending = new ConcurrentHashMap<>();
    private final String instance = UUID.randomUUID().toString();
    private final AtomicLong written = new AtomicLong();

    void count(String provider, String runtimeId) {
        pending.computeIfAbsent(provider + SEPARATOR + runtimeId, k -> new LongAdder())
                .increment();
    }

    /** Writes what was counted since the last flush; forgets deployments no longer running. */
    void flush(UsageRecorder recorder, Map<String, Target> running) {
        Instant now = Instant.now();
        for (Map.Entry<String, LongAdder> e : java.util.List.copyOf(pending.entrySet())) {
            String key = e.getKey();
            String runtimeId = key.substring(key.indexOf(SEPARATOR) + 1);
            Target target = running.get(runtimeId);
            long n = e.getValue().sumThenReset();
            if (target == null) {
                pending.remove(key);
            }
            if (n == 0 || target == null || recorder == null) {
                continue;
            }
            String provider = key.substring(0, key.indexOf(SEPARATOR));
            recorder.record(new UsageEvent(
                    target.spaceId(),
                    meter(provider),
                    target.serviceId(),
                    n,
                    "requests:" + instance + ":" + written.incrementAndGet(),
                    now));
        }
    }

    static String meter(String provider) {
        return "podman".equals(provider) ? Meters.CONTAINER_REQUESTS : Meters.WORKER_REQUESTS;
    }
}
