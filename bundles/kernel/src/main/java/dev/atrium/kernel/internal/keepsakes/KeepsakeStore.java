package dev.atrium.kernel.internal.keepsakes;

import dev.atrium.kernel.api.NamedThreads;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What bundles keep for their next revisions ({@link dev.atrium.kernel.api.Keepsakes}), by bundle and key, with the
 * deadline after which the kernel closes what was not taken.
 */
@Component(service = KeepsakeStore.class)
public class KeepsakeStore {

    private static final Logger LOG = LoggerFactory.getLogger(KeepsakeStore.class);

    private record Kept(Map<String, Object> things, ScheduledFuture<?> expiry) {}

    private final Map<String, Kept> kept = new HashMap<>(); // guarded by this
    private final ScheduledExecutorService timer;

    public KeepsakeStore() {
        this.timer = NamedThreads.scheduler("atrium-keepsakes");
    }

    void keep(String owner, String key, Map<String, ?> things, Duration within) {
        Map<String, Object> copy = Map.copyOf(things);
        copy.forEach((name, value) -> requireJdk(name, value));
        String id = owner + "\n" + key;
        Kept before;
        synchronized (this) {
            ScheduledFuture<?> expiry;
            try {
                expiry = timer.schedule(() -> expire(id), Math.max(1, within.toMillis()), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                // the kernel stops too: nothing will take them
                close(copy);
                return;
            }
            before = kept.put(id, new Kept(copy, expiry));
        }
        if (before != null) {
            before.expiry().cancel(false);
            close(before.things());
        }
    }

    synchronized Optional<Map<String, Object>> take(String owner, String key) {
        Kept k = kept.remove(owner + "\n" + key);
        if (k == null) {
            return Optional.empty();
        }
        k.expiry().cancel(false);
        return Optional.of(k.things());
    }

    private void expire(String id) {
        Kept k;
        synchronized (this) {
            k = kept.remove(id);
        }
        if (k != null) {
            LOG.warn("{} was kept for a next revision that did not take it in time: closing it", id.replace('\n', '/'));
            close(k.things());
        }
    }

    @Deactivate
    void deactivate() {
        List<Kept> all;
        synchronized (this) {
            all = List.copyOf(kept.values());
            kept.clear();
        }
        timer.shutdownNow();
        all.forEach(k -> close(k.things()));
    }

    /** JDK types only: the class of a value is the bootstrap's or the platform loader's (else a bundle's class loader stays alive). */
    static void requireJdk(String name, Object value) {
        if (value == null) {
            return;
        }
        ClassLoader loader = value.getClass().getClassLoader();
        if (loader != null && loader != ClassLoader.getPlatformClassLoader()) {
            throw new IllegalArgumentException(
                    "keepsake " + name + " is a " + value.getClass().getName() + ", not a JDK type");
        }
        if (value instanceof Map<?, ?> m) {
            m.forEach((k, v) -> {
                requireJdk(name, k);
                requireJdk(name, v);
            });
        } else if (value instanceof Collection<?> c) {
            c.forEach(v -> requireJdk(name, v));
        }
    }

    static void close(Object value) {
        try {
            if (value instanceof Process p) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            } else if (value instanceof AutoCloseable c) {
                c.close();
            } else if (value instanceof Map<?, ?> m) {
                m.values().forEach(KeepsakeStore::close);
            } else if (value instanceof Collection<?> c) {
                c.forEach(KeepsakeStore::close);
            }
        } catch (Exception e) {
            LOG.debug("closing a keepsake failed", e);
        }
    }
}
