package dev.atrium.containers.podman.internal;

import dev.atrium.deploy.api.LogLine;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last lines each container service's deployments wrote, a bounded ring per service, and who follows them. A line's
 * {@code seq} is the larger of the previous line's plus one and the time in microseconds, so it keeps increasing
 * across restarts of the server too (while the clock does).
 */
final class ServiceLogs {

    private static final Logger LOG = LoggerFactory.getLogger(ServiceLogs.class);

    private final int capacity;
    private final ConcurrentHashMap<String, ServiceLog> services = new ConcurrentHashMap<>();

    ServiceLogs(int capacity) {
        this.capacity = Math.max(1, capacity);
    }

    private static final class ServiceLog {
        final ArrayDeque<LogLine> lines = new ArrayDeque<>();
        final CopyOnWriteArrayList<Consumer<LogLine>> followers = new CopyOnWriteArrayList<>();
        long lastSeq;
    }

    void append(String serviceId, String deploymentId, Instant at, String level, String message) {
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
                    LOG.debug("a log follower of service {} failed", serviceId, e);
                }
            }
        }
    }

    List<LogLine> read(String serviceId, long afterSeq, int limit) {
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

    AutoCloseable follow(String serviceId, Consumer<LogLine> sink) {
        ServiceLog log = services.computeIfAbsent(serviceId, s -> new ServiceLog());
        log.followers.add(sink);
        return () -> log.followers.remove(sink);
    }
}
