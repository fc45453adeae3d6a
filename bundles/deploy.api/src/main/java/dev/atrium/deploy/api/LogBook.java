package dev.atrium.deploy.api;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The last lines each service's deployments wrote, a bounded ring per service, and who follows them: what a provider
 * needs for {@link DeploymentProvider#logs} and {@link DeploymentProvider#follow}. A line's {@code seq} is the larger of
 * the previous line's plus one and the time in microseconds, so it keeps increasing across restarts of the server too
 * (while the clock does). Thread-safe.
 *
 * @since 1.2
 */
public final class LogBook {

    private final int capacity;
    private final ConcurrentHashMap<String, ServiceLog> services = new ConcurrentHashMap<>();

    /** A book that keeps at most {@code capacity} lines per service. */
    public LogBook(int capacity) {
        this.capacity = Math.max(1, capacity);
    }

    private static final class ServiceLog {
        final ArrayDeque<LogLine> lines = new ArrayDeque<>();
        final CopyOnWriteArrayList<Consumer<LogLine>> followers = new CopyOnWriteArrayList<>();
        long lastSeq;
    }

    /** Adds a line and hands it to the service's followers, in order. */
    public void append(String serviceId, String deploymentId, Instant at, String level, String message) {
        ServiceLog log = services.computeIfAbsent(serviceId, s -> new ServiceLog());
        LogLine line;
        synchronized (log) {
            Instant now = Instant.now();
            long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
            log.lastSeq = Math.max(log.lastSeq + 1, micros);
            line = new LogLine(log.lastSeq, at, deploymentId, level, message);
            log.lines.addLast(line);
            while (log.lines.size() > capacity) {
                log.lines.removeFirst();
            }
            // under the lock, so followers see lines in seq order (sinks must not block)
            for (Consumer<LogLine> follower : log.followers) {
                try {
                    follower.accept(line);
                } catch (RuntimeException e) {
                    // a follower that fails is its own affair: the line still reaches the others
                }
            }
        }
    }

    /** As {@link DeploymentProvider#logs}. */
    public List<LogLine> read(String serviceId, long afterSeq, int limit) {
        ServiceLog log = services.get(serviceId);
        if (log == null || limit <= 0) {
            return List.of();
        }
        List<LogLine> out = new ArrayList<>();
        synchronized (log) {
            Iterator<LogLine> it = log.lines.iterator();
            while (it.hasNext() && out.size() < limit) {
                LogLine line = it.next();
                if (line.seq() > afterSeq) {
                    out.add(line);
                }
            }
        }
        return out;
    }

    /** As {@link DeploymentProvider#follow}. */
    public AutoCloseable follow(String serviceId, Consumer<LogLine> sink) {
        ServiceLog log = services.computeIfAbsent(serviceId, s -> new ServiceLog());
        log.followers.add(sink);
        return () -> log.followers.remove(sink);
    }
}
