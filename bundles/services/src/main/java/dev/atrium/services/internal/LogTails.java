package dev.atrium.services.internal;

import dev.atrium.deploy.api.LogLine;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.sse.Sse;
import javax.ws.rs.sse.SseEventSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live tails of service logs over SSE: one daemon thread per open tail, which first sends the lines after the client's
 * position, then the provider's new lines as {@link dev.atrium.deploy.api.DeploymentProvider#follow} hands them over
 * (through a queue: the provider's callback must not block), with a comment every 15 s so a dead client is noticed.
 * Every tail ends when its client goes, or when the bundle stops ({@link #close}).
 */
final class LogTails implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LogTails.class);
    private static final int MAX_QUEUED = 10_000;

    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    void start(Deployer deployer, Service service, long after, SseEventSink sink, Sse sse) {
        if (closed) {
            sink.close();
            return;
        }
        Thread t = new Thread(() -> run(deployer, service, after, sink, sse), "atrium-services-logs-" + service.id());
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    private void run(Deployer deployer, Service service, long after, SseEventSink sink, Sse sse) {
        BlockingQueue<LogLine> queue = new LinkedBlockingQueue<>(MAX_QUEUED);
        long last = after;
        try (AutoCloseable follow = deployer.follow(service, queue::offer)) {
            // at once, so that the client has the response's headers before the first line is written
            sink.send(sse.newEventBuilder().comment("tail of " + service.id()).build())
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            for (; ; ) {
                var page = deployer.logs(service, last, 1000);
                for (LogLine l : page) {
                    send(sink, sse, l);
                    last = l.seq();
                }
                if (page.size() < 1000) {
                    break;
                }
            }
            while (!closed && !sink.isClosed()) {
                LogLine l = queue.poll(15, TimeUnit.SECONDS);
                if (l == null) {
                    sink.send(sse.newEventBuilder().comment("keep-alive").build())
                            .toCompletableFuture()
                            .get(10, TimeUnit.SECONDS);
                } else if (l.seq() > last) {
                    send(sink, sse, l);
                    last = l.seq();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("services: a log tail of {} ended: {}", service.id(), e.toString());
        } finally {
            try {
                sink.close();
            } catch (RuntimeException ignored) {
                // already closed
            }
            threads.remove(Thread.currentThread());
        }
    }

    private static void send(SseEventSink sink, Sse sse, LogLine l) throws Exception {
        Map<String, Object> view = Views.log(l);
        sink.send(sse.newEventBuilder()
                        .id(Long.toString(l.seq()))
                        .name("log")
                        .mediaType(MediaType.APPLICATION_JSON_TYPE)
                        .data(String.class, Deployer.JSON.writeValueAsString(view))
                        .build())
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        closed = true;
        for (Thread t : threads) {
            t.interrupt();
        }
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
