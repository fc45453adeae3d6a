package dev.atrium.kernel.internal.edge;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Closes a connection whose request headers have not all arrived within the deadline, counted from the request's first
 * byte (from the connection's opening for its first request). Jetty's idle timeout alone lets a client that sends one
 * header line every few seconds hold a connection for good (slowloris). A connection between requests (keep-alive) is
 * left to the idle timeout.
 *
 * <p>Jetty 12.0 has no such deadline: once a second this looks at each open connection's parser. The parser belongs to
 * the connection's selector thread, so what is read here may be a moment old; a connection is closed only when two
 * looks in a row saw the same request start past the deadline.
 */
final class HeaderDeadline extends AbstractLifeCycle implements Connection.Listener {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HeaderDeadline.class);

    private static final class Watch {
        final long openedAt = System.nanoTime();
        long lastBegin = Long.MIN_VALUE;
    }

    private final LongSupplier deadlineMillis;
    private final Scheduler scheduler;
    private final Map<HttpConnection, Watch> open = new ConcurrentHashMap<>();
    /** Connections of the relay that have not read a request yet, and when they opened. */
    private final Map<RelayConnection, Long> relays = new ConcurrentHashMap<>();

    private volatile Scheduler.Task next;

    HeaderDeadline(LongSupplier deadlineMillis, Scheduler scheduler) {
        this.deadlineMillis = deadlineMillis;
        this.scheduler = scheduler;
    }

    @Override
    protected void doStart() {
        schedule();
    }

    @Override
    protected void doStop() {
        Scheduler.Task task = next;
        if (task != null) {
            task.cancel();
        }
        open.clear();
        relays.clear();
    }

    @Override
    public void onOpened(Connection connection) {
        if (connection instanceof HttpConnection http) {
            open.put(http, new Watch());
        } else if (connection instanceof RelayConnection relay) {
            relays.put(relay, System.nanoTime());
        }
    }

    @Override
    public void onClosed(Connection connection) {
        open.remove(connection);
        relays.remove(connection);
    }

    private void schedule() {
        if (isRunning() || isStarting()) {
            next = scheduler.schedule(this::sweep, 1, TimeUnit.SECONDS);
        }
    }

    private void sweep() {
        try {
            long now = System.nanoTime();
            long deadlineNanos = TimeUnit.MILLISECONDS.toNanos(deadlineMillis.getAsLong());
            int closed = 0;
            for (var it = relays.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<RelayConnection, Long> e = it.next();
                RelayConnection relay = e.getKey();
                if (!relay.awaitingFirstHead) {
                    it.remove();
                } else if (now - e.getValue() > deadlineNanos) {
                    relay.getEndPoint().close();
                    it.remove();
                    closed++;
                }
            }
            for (Map.Entry<HttpConnection, Watch> e : open.entrySet()) {
                HttpConnection http = e.getKey();
                Watch watch = e.getValue();
                HttpParser parser = http.getParser();
                long begin;
                if (!parser.isStart() && parser.inHeaderState()) {
                    begin = parser.getBeginNanoTime();
                } else if (parser.isStart() && http.getMessagesIn() == 0) {
                    begin = watch.openedAt;
                } else {
                    watch.lastBegin = Long.MIN_VALUE;
                    continue;
                }
                if (now - begin > deadlineNanos && watch.lastBegin == begin) {
                    http.getEndPoint().close();
                    closed++;
                }
                watch.lastBegin = begin;
            }
            if (closed > 0) {
                LOG.info(
                        "closed {} connection(s) whose request headers took longer than {} ms",
                        closed,
                        TimeUnit.NANOSECONDS.toMillis(deadlineNanos));
            }
        } catch (RuntimeException e) {
            LOG.warn("the request header deadline could not be checked: {}", e.toString());
        } finally {
            schedule();
        }
    }
}
