package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import javax.ws.rs.sse.OutboundSseEvent;
import javax.ws.rs.sse.SseEventSink;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.atrium.runs.internal.RunStore.Event;

class SseSinkTest {

    /** An SseEventSink whose sends complete with the given stage. */
    static final class FakeSink implements SseEventSink {
        CompletableFuture<Object> next = CompletableFuture.completedFuture(null);
        int sends;
        volatile boolean closed;

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public CompletionStage<?> send(OutboundSseEvent event) {
            sends++;
            return next;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    static Event event(long id) {
        return Event.of("run_1", id, "message.delta", JsonNodeFactory.instance.objectNode(), Instant.now());
    }

    static boolean closes(FakeSink fake) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!fake.closed && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        return fake.closed;
    }

    @Test
    void aSendRefusedByAFullQueueIsNotReportedAsDeliveredAndClosesTheStream() {
        FakeSink fake = new FakeSink();
        SseSink sink = new SseSink(fake, e -> null, () -> null, Runnable::run);
        assertTrue(sink.send(event(1)));
        fake.next = CompletableFuture.failedFuture(new IllegalStateException("queue full"));
        assertFalse(sink.send(event(2)), "an event the sink refused must not count as sent");
        assertTrue(closes(fake), "the stream closes so that the client resumes with Last-Event-ID");
        fake.next = CompletableFuture.completedFuture(null);
        assertFalse(sink.send(event(3)), "nothing is sent after a dropped event");
        assertEquals(2, fake.sends);
    }

    @Test
    void aSendThatFailsLaterEndsTheSubscription() {
        FakeSink fake = new FakeSink();
        SseSink sink = new SseSink(fake, e -> null, () -> null, Runnable::run);
        AtomicInteger ended = new AtomicInteger();
        sink.onFailure(ended::incrementAndGet);
        CompletableFuture<Object> pending = new CompletableFuture<>();
        fake.next = pending;
        assertTrue(sink.send(event(1)));
        pending.completeExceptionally(new IllegalStateException("client gone"));
        assertEquals(1, ended.get());
        assertTrue(closes(fake));
        assertFalse(sink.send(event(2)));
        assertFalse(sink.heartbeat());
    }
}
