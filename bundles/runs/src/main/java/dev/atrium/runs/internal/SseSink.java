package dev.atrium.runs.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.ws.rs.sse.OutboundSseEvent;
import javax.ws.rs.sse.SseEventSink;

import dev.atrium.runs.internal.RunStore.Event;

/**
 * A subscription's Server-Sent Events sink. CXF's {@link SseEventSink#send} is asynchronous: it fails the returned
 * stage when the connection is gone or its queue is full. A failed send is never reported as delivered: the stream
 * is closed instead, so the client reconnects with {@code Last-Event-ID} and gets the event it missed.
 */
final class SseSink implements EventHub.Sink {

    private final SseEventSink sink;
    private final Function<Event, OutboundSseEvent> event;
    private final Supplier<OutboundSseEvent> heartbeat;
    private final Executor closer;
    private volatile boolean failed;
    private volatile Runnable onFailure = () -> {
    };

    /** {@code closer} runs CXF's close, which may wait for queued events to flush: never on the fan-out thread. */
    SseSink(SseEventSink sink, Function<Event, OutboundSseEvent> event, Supplier<OutboundSseEvent> heartbeat, Executor closer) {
        this.closer = closer;
        this.sink = sink;
        this.event = event;
        this.heartbeat = heartbeat;
    }

    /** Called (once, on any thread) when a send fails after it was accepted: the subscription must end. */
    void onFailure(Runnable r) {
        this.onFailure = r;
    }

    @Override
    public boolean send(Event e) {
        return offer(event.apply(e));
    }

    @Override
    public boolean heartbeat() {
        return offer(heartbeat.get());
    }

    private boolean offer(OutboundSseEvent e) {
        if (failed || sink.isClosed()) {
            return false;
        }
        CompletionStage<?> sent;
        try {
            sent = sink.send(e);
        } catch (RuntimeException ex) {
            fail();
            return false;
        }
        if (sent == null) {
            return true;
        }
        CompletableFuture<?> f = sent.toCompletableFuture();
        if (f.isCompletedExceptionally() || f.isCancelled()) {
            fail();
            return false;
        }
        f.whenComplete((ok, error) -> {
            if (error != null) {
                fail();
                onFailure.run();
            }
        });
        return !failed;
    }

    private void fail() {
        if (!failed) {
            failed = true;
            closeAsync();
        }
    }

    boolean failed() {
        return failed;
    }

    @Override
    public void close(boolean terminal) {
        closeAsync();
    }

    private void closeAsync() {
        try {
            closer.execute(this::closeQuietly);
        } catch (RuntimeException e) { // shutting down
            closeQuietly();
        }
    }

    private void closeQuietly() {
        try {
            sink.close();
        } catch (Exception e) {
            // already gone
        }
    }
}
