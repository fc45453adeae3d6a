package dev.atrium.streams.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.streams.api.Feed;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.servlet.AsyncContext;
import javax.servlet.AsyncListener;
import javax.servlet.ServletContext;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.junit.jupiter.api.Test;

/**
 * The per-client queue of {@link SseStream}: what it writes, in which order, and when it gives a client up. The
 * connection completes writes at once, or holds them as a congested socket does, as the test says.
 */
class SseStreamTest {

    record Event(String runId, long id, String type, String json) {}

    static final Feed<Event> FEED = new Feed<>() {
        @Override
        public List<Event> after(String key, long position, int limit) {
            return List.of();
        }

        @Override
        public String key(Event e) {
            return e.runId();
        }

        @Override
        public long position(Event e) {
            return e.id();
        }

        @Override
        public String type(Event e) {
            return e.type();
        }

        @Override
        public String json(Event e) {
            return e.json();
        }
    };

    static final int MAX_QUEUED_BYTES = 4 * 1024 * 1024;

    /** One write at a time, like Jetty's response: a second write while one is pending is an error. */
    static final class Connection implements Output {
        final ByteArrayOutputStream written = new ByteArrayOutputStream();
        boolean congested;
        final ArrayDeque<Runnable> pending = new ArrayDeque<>();
        Runnable done;
        Consumer<Throwable> lastFailure;
        int writes;
        boolean inFlight;

        @Override
        public void bind(Runnable done, Consumer<Throwable> failed) {
            this.done = done;
            this.lastFailure = failed;
        }

        @Override
        public void open() {
            write(new ByteBuffer[0]);
        }

        @Override
        public void write(Frame frame) {
            write(frame.chunk());
        }

        @Override
        public void write(List<Frame> frames) {
            write(frames.stream().map(Frame::chunk).toArray(ByteBuffer[]::new));
        }

        /** Keeps the chunks' contents: what a client reads after taking the chunked framing off. */
        private void write(ByteBuffer... chunks) {
            if (inFlight) {
                throw new IllegalStateException("write pending");
            }
            writes++;
            for (ByteBuffer c : chunks) {
                byte[] b = new byte[c.remaining()];
                c.get(b);
                String chunk = new String(b, StandardCharsets.UTF_8);
                int size = chunk.indexOf("\r\n");
                assertTrue(chunk.endsWith("\r\n"), chunk);
                byte[] data = chunk.substring(size + 2, chunk.length() - 2).getBytes(StandardCharsets.UTF_8);
                assertEquals(
                        Integer.parseInt(chunk.substring(0, size), 16), data.length, "the chunk's size is its data's");
                written.write(data, 0, data.length);
            }
            if (congested) {
                inFlight = true;
                pending.add(() -> {
                    inFlight = false;
                    done.run();
                });
            } else {
                done.run();
            }
        }

        void relieve() {
            congested = false;
            while (!pending.isEmpty()) {
                pending.poll().run();
            }
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
        public void addListener(AsyncListener listener) {}

        @Override
        public void addListener(AsyncListener listener, ServletRequest request, ServletResponse response) {}

        @Override
        public <T extends AsyncListener> T createListener(Class<T> clazz) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void setTimeout(long timeout) {}

        @Override
        public long getTimeout() {
            return 0;
        }
    }

    static Event event(long id, String text) {
        return new Event("run_1", id, "message.delta", "{\"text\":\"" + text + "\"}");
    }

    static String frame(Event e) {
        return "id: " + e.id() + "\nevent: " + e.type() + "\ndata: " + e.json() + "\n\n";
    }

    final Connection connection = new Connection();
    final Completion async = new Completion();
    final AtomicInteger subscribed = new AtomicInteger();
    final AtomicInteger ended = new AtomicInteger();
    final SseStream<Event> stream = new SseStream<>(
            async,
            connection,
            new Frames<>(FEED),
            MAX_QUEUED_BYTES,
            s -> {
                subscribed.incrementAndGet();
                return null;
            },
            s -> ended.incrementAndGet());

    /** A stream on {@code out} that nothing subscribes. */
    private SseStream<Event> direct(Output out) {
        return new SseStream<>(
                async, out, new Frames<>(FEED), MAX_QUEUED_BYTES, s -> null, s -> ended.incrementAndGet());
    }

    @Test
    void theHeadersGoOutFirstThenTheSubscriptionStartsOnce() {
        assertTrue(stream.send(event(1, "early")), "accepted before start: it waits");
        assertEquals(0, connection.writes);
        stream.start();
        stream.start();
        assertEquals(1, subscribed.get(), "subscribed once");
        assertTrue(connection.writes >= 2, "an empty write commits the headers, then the frame");
        assertEquals(frame(event(1, "early")), connection.text());
    }

    @Test
    void framesQueuedWhileAWriteIsUnderWayGoOutInOrderAsOneWrite() {
        stream.start();
        connection.congested = true;
        assertTrue(stream.send(event(1, "t1")));
        int writes = connection.writes;
        for (int i = 2; i <= 5; i++) {
            assertTrue(stream.send(event(i, "t" + i)));
        }
        assertTrue(stream.heartbeat());
        assertEquals(writes, connection.writes, "nothing more while the socket has not taken the first");
        connection.relieve();
        assertEquals(writes + 1, connection.writes, "what queued meanwhile is one write");
        StringBuilder expected = new StringBuilder();
        for (int i = 1; i <= 5; i++) {
            expected.append(frame(event(i, "t" + i)));
        }
        assertEquals(expected + ": heartbeat\n\n", connection.text());
    }

    @Test
    void eventsHandedOverTogetherGoOutAsOneWrite() {
        stream.start();
        int writes = connection.writes;
        stream.hold();
        stream.hold();
        assertTrue(stream.send(event(1, "a")));
        stream.release();
        assertTrue(stream.send(event(2, "b")));
        assertEquals(writes, connection.writes, "held until the outermost release");
        stream.release();
        assertEquals(writes + 1, connection.writes);
        assertEquals(frame(event(1, "a")) + frame(event(2, "b")), connection.text());
    }

    @Test
    void aClientThatLeavesTooMuchUnreadIsDroppedAndGetsNothingAfterTheGap() {
        stream.start();
        connection.congested = true;
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
        assertTrue(accepted * 64 * 1024 <= MAX_QUEUED_BYTES + 2 * 64 * 1024);
        assertEquals(0, async.completed.get(), "not while a write is under way");
        int writes = connection.writes;
        connection.relieve();
        assertEquals(writes, connection.writes, "nothing is written after a dropped event");
        assertEquals(1, async.completed.get(), "the response ends, so the client reconnects with Last-Event-ID");
        assertEquals(1, ended.get());
        assertFalse(stream.send(event(999, "late")));
        assertFalse(stream.heartbeat());
    }

    @Test
    void aTerminalCloseEndsTheResponseOnlyAfterEveryQueuedFrameWentOut() {
        stream.start();
        connection.congested = true;
        stream.send(event(1, "a"));
        stream.send(event(2, "b"));
        stream.close(true);
        assertEquals(0, async.completed.get(), "queued frames are not cut off");
        assertFalse(stream.send(event(3, "c")), "nothing is accepted after close");
        connection.relieve();
        assertTrue(connection.text().contains("id: 2\n"));
        assertFalse(connection.text().contains("id: 3\n"));
        assertEquals(1, async.completed.get());
    }

    @Test
    void aFailedWriteEndsTheStream() {
        stream.start();
        connection.congested = true;
        stream.send(event(1, "a"));
        connection.lastFailure.accept(new IOException("connection reset"));
        assertEquals(1, async.completed.get());
        assertFalse(stream.send(event(2, "b")));
    }

    /** Takes the HTTP/1.1 chunks off a body, strictly: each size line, its data, its CRLF. */
    static String dechunk(String body) {
        StringBuilder data = new StringBuilder();
        int at = 0;
        while (at < body.length()) {
            int eol = body.indexOf("\r\n", at);
            assertTrue(eol > at, "a chunk size line at " + at);
            int size = Integer.parseInt(body.substring(at, eol), 16);
            int from = eol + 2;
            byte[] rest = body.substring(from).getBytes(StandardCharsets.UTF_8);
            String chunk = new String(rest, 0, size, StandardCharsets.UTF_8);
            data.append(chunk);
            at = from + chunk.length();
            assertEquals("\r\n", body.substring(at, at + 2), "CRLF after a chunk's data");
            at += 2;
        }
        return data.toString();
    }

    @Test
    void writesTheConnectionCannotTakeAtOnceFinishAsItDrainsAndEverythingArrivesInOrder() throws Exception {
        // Jetty's own end point with room for 100 bytes: every frame is a partial write the write flusher completes
        ByteArrayEndPoint socket = new ByteArrayEndPoint(new byte[0], 100);
        socket.setGrowOutput(false);
        SseStream<Event> direct = direct(new ChunkedEndPointOutput(socket));
        direct.start();
        StringBuilder expected = new StringBuilder();
        for (int i = 1; i <= 30; i++) {
            Event e = event(i, "grüße " + "z".repeat(i * 7));
            assertTrue(direct.send(e));
            expected.append(frame(e));
            if (i % 10 == 0) {
                assertTrue(direct.heartbeat());
                expected.append(": heartbeat\n\n");
            }
        }
        direct.close(true);
        assertEquals(0, async.completed.get(), "not complete while bytes wait for the socket");
        java.io.ByteArrayOutputStream wire = new java.io.ByteArrayOutputStream();
        for (int reads = 0;
                reads < 10_000
                        && (async.completed.get() == 0 || socket.getOutput().hasRemaining());
                reads++) {
            ByteBuffer read = socket.takeOutput(); // the client reads: the pending write goes on
            byte[] bytes = new byte[read.remaining()];
            read.get(bytes);
            wire.write(bytes);
        }
        assertEquals(1, async.completed.get(), "the response ends once the last frame went out");
        assertEquals(expected.toString(), dechunk(wire.toString(StandardCharsets.UTF_8)));
    }

    @Test
    void aConnectionThatBreaksEndsTheStream() {
        ByteArrayEndPoint socket = new ByteArrayEndPoint(new byte[0], 100);
        socket.setGrowOutput(false);
        SseStream<Event> direct = direct(new ChunkedEndPointOutput(socket));
        direct.start();
        assertTrue(direct.send(event(1, "x".repeat(300))), "partly written, the rest pending");
        socket.close(); // the client went away: the pending write fails
        assertEquals(1, async.completed.get());
        assertEquals(1, ended.get());
        assertFalse(direct.send(event(2, "after")));
    }

    @Test
    void aWriteStillWaitingAtTheIdleTimeoutClosesTheConnectionAndEndsTheStream() {
        ByteArrayEndPoint socket = new ByteArrayEndPoint(new byte[0], 100);
        socket.setGrowOutput(false);
        ChunkedEndPointOutput out = new ChunkedEndPointOutput(socket);
        SseStream<Event> direct = direct(out);
        direct.start();
        assertFalse(out.idleTimedOut(new java.util.concurrent.TimeoutException()), "Jetty's own handling goes on");
        assertTrue(socket.isOpen(), "a stream with nothing to write is left alone");
        assertTrue(direct.send(event(1, "x".repeat(300))));
        assertFalse(out.idleTimedOut(new java.util.concurrent.TimeoutException()));
        assertFalse(socket.isOpen(), "a client that read nothing for the whole idle timeout is disconnected");
        assertEquals(1, async.completed.get());
        assertFalse(direct.send(event(2, "after")));
    }

    @Test
    void anEventReadFromTheTableAgainSharesItsFrame() {
        Frames<Event> frames = new Frames<>(FEED);
        Event e = event(7, "same");
        Event again = event(7, "same");
        assertSame(frames.of(e), frames.of(again), "each subscriber's backlog reads its own copy of the row");
        Event other = new Event("run_1", 7, "message.delta", "{\"text\":\"same\"}");
        assertEquals(frame(other), new String(frames.of(other).text, StandardCharsets.UTF_8));
        for (int i = 0; i < 200; i++) { // more events than the ring of recent ones holds
            frames.of(event(100 + i, "x".repeat(100_000)));
        }
        assertEquals(
                frame(event(7, "same")),
                new String(frames.of(event(7, "same")).text, StandardCharsets.UTF_8),
                "the shared frames stay within their bytes: an evicted one is made again");
    }

    @Test
    void everySubscriberOfAnEventSendsTheSameBytes() {
        Frames<Event> frames = new Frames<>(FEED);
        Event e = event(7, "same");
        assertSame(frames.of(e), frames.of(e));
        assertEquals(frame(event(8, "other")), new String(frames.of(event(8, "other")).text, StandardCharsets.UTF_8));
    }

    @Test
    void aFrameIsOneHttpChunkWhoseViewsWriteIndependently() {
        Event e = event(9, "grüße");
        Frame f = new Frames<>(FEED).of(e);
        byte[] text = frame(e).getBytes(StandardCharsets.UTF_8);
        ByteBuffer one = f.chunk();
        ByteBuffer two = f.chunk();
        assertTrue(one.isDirect(), "a socket write copies nothing");
        byte[] got = new byte[one.remaining()];
        one.get(got);
        assertEquals(
                Integer.toHexString(text.length) + "\r\n" + frame(e) + "\r\n", new String(got, StandardCharsets.UTF_8));
        assertEquals(got.length, two.remaining(), "one subscriber's write does not move another's view");
    }
}
