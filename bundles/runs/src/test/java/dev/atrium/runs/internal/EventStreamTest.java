package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

import javax.servlet.AsyncContext;
import javax.servlet.AsyncListener;
import javax.servlet.ServletContext;
import javax.servlet.ServletOutputStream;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.WriteListener;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.atrium.runs.internal.RunEventStreams.Frames;
import dev.atrium.runs.internal.RunEventStreams.Stream;
import dev.atrium.runs.internal.RunStore.Event;

/**
 * The per-client queue of {@link RunEventStreams.Stream}: what it writes, in which order, and when it gives a client
 * up. The connection is a servlet output stream whose readiness the test sets, as a congested socket would.
 */
class EventStreamTest {

    /** Non-blocking servlet output: while not ready, a write would be an error (as in a real container). */
    static final class Connection extends ServletOutputStream {
        final ByteArrayOutputStream written = new ByteArrayOutputStream();
        boolean ready = true;
        int flushes;
        WriteListener listener;

        @Override
        public boolean isReady() {
            return ready;
        }

        @Override
        public void setWriteListener(WriteListener l) {
            listener = l;
        }

        @Override
        public void write(int b) {
            if (!ready) {
                throw new IllegalStateException("write while not ready");
            }
            written.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (!ready) {
                throw new IllegalStateException("write while not ready");
            }
            written.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            if (!ready) {
                throw new IllegalStateException("flush while not ready");
            }
            flushes++;
        }

        String text() {
            return written.toString(StandardCharsets.UTF_8);
        }
    }

    static final class Completion implements AsyncContext {
        final AtomicInteger completed = new AtomicInteger();

        @Override
        public void complete() {
            completed.incrementAndGet();
        }

        @Override
        public ServletRequest getRequest() {
            throw new UnsupportedOperationException();
        }

        @Override
        public ServletResponse getResponse() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean hasOriginalRequestAndResponse() {
            return true;
        }

        @Override
        public void dispatch() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void dispatch(String path) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void dispatch(ServletContext context, String path) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void start(Runnable run) {
            run.run();
        }

        @Override
        public void addListener(AsyncListener listener) {
        }

        @Override
        public void addListener(AsyncListener listener, ServletRequest request, ServletResponse response) {
        }

        @Override
        public <T extends AsyncListener> T createListener(Class<T> clazz) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void setTimeout(long timeout) {
        }

        @Override
        public long getTimeout() {
            return 0;
        }
    }

    static Event event(long id, String text) {
        return Event.of("run_1", id, "message.delta", JsonNodeFactory.instance.objectNode().put("text", text), Instant.parse("2026-01-01T00:00:00Z"));
    }

    final Connection connection = new Connection();
    final Completion async = new Completion();
    final AtomicInteger subscribed = new AtomicInteger();
    final AtomicInteger ended = new AtomicInteger();
    final Stream stream = new Stream(async, connection, new Frames(), s -> {
        subscribed.incrementAndGet();
        return null;
    }, s -> ended.incrementAndGet());

    @Test
    void nothingIsWrittenBeforeTheConnectionFirstTakesOutputAndThenHeadersGoOutAtOnce() {
        assertTrue(stream.send(event(1, "a")));
        assertEquals("", connection.text());
        assertEquals(0, subscribed.get());
        stream.onWritePossible();
        assertEquals(1, subscribed.get());
        assertEquals("id: 1\nevent: message.delta\ndata: " + event(1, "a").toJsonText() + "\n\n", connection.text());
        assertTrue(connection.flushes >= 1, "the headers and the first frame are flushed, not left in a buffer");
        stream.onWritePossible();
        assertEquals(1, subscribed.get(), "subscribed once");
    }

    @Test
    void framesQueuedWhileTheConnectionIsBusyGoOutInOrderWhenItIsReadyAgain() {
        stream.onWritePossible();
        connection.ready = false;
        for (int i = 1; i <= 5; i++) {
            assertTrue(stream.send(event(i, "t" + i)));
        }
        assertTrue(stream.heartbeat());
        assertEquals("", connection.text());
        connection.ready = true;
        stream.onWritePossible();
        String text = connection.text();
        int last = -1;
        for (int i = 1; i <= 5; i++) {
            int at = text.indexOf("id: " + i + "\n");
            assertTrue(at > last, "event " + i + " in order: " + text);
            last = at;
        }
        assertTrue(text.endsWith(": heartbeat\n\n"));
    }

    @Test
    void aClientThatLeavesTooMuchUnreadIsDroppedAndGetsNothingAfterTheGap() {
        stream.onWritePossible();
        connection.ready = false;
        String big = "x".repeat(64 * 1024);
        int accepted = 0;
        boolean refused = false;
        for (int i = 1; i <= 200 && !refused; i++) {
            if (stream.send(event(i, big))) {
                accepted++;
            } else {
                refused = true;
            }
        }
        assertTrue(refused, "a client that reads nothing cannot make the server queue without bound");
        assertTrue(accepted * 64 * 1024 <= RunEventStreams.MAX_QUEUED_BYTES + 64 * 1024);
        assertEquals(1, async.completed.get(), "the response ends, so the client reconnects with Last-Event-ID");
        assertEquals(1, ended.get());
        connection.ready = true;
        stream.onWritePossible();
        assertFalse(stream.send(event(999, "late")));
        assertFalse(stream.heartbeat());
        assertEquals("", connection.text(), "nothing is written after a dropped event");
    }

    @Test
    void aTerminalCloseEndsTheResponseOnlyAfterEveryQueuedFrameWentOut() {
        stream.onWritePossible();
        connection.ready = false;
        stream.send(event(1, "a"));
        stream.send(event(2, "b"));
        stream.close(true);
        assertEquals(0, async.completed.get(), "queued frames are not cut off");
        assertFalse(stream.send(event(3, "c")), "nothing is accepted after close");
        connection.ready = true;
        stream.onWritePossible();
        assertTrue(connection.text().contains("id: 2\n"));
        assertFalse(connection.text().contains("id: 3\n"));
        assertEquals(1, async.completed.get());
    }

    @Test
    void aWriteErrorEndsTheStream() {
        stream.onWritePossible();
        stream.onError(new IOException("connection reset"));
        assertEquals(1, async.completed.get());
        assertFalse(stream.send(event(1, "a")));
    }

    @Test
    void everySubscriberOfAnEventSendsTheSameBytes() {
        Frames frames = new Frames();
        Event e = event(7, "same");
        assertSame(frames.of(e), frames.of(e));
        assertEquals("id: 8\nevent: message.delta\ndata: " + event(8, "other").toJsonText() + "\n\n",
                new String(frames.of(event(8, "other")), StandardCharsets.UTF_8));
    }
}
