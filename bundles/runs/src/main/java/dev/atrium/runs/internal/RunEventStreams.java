package dev.atrium.runs.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.servlet.AsyncContext;
import javax.servlet.AsyncEvent;
import javax.servlet.AsyncListener;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.EndPoint;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.runs.internal.RunStore.Event;
import dev.atrium.runs.internal.RunStore.Run;

/**
 * {@code GET /api/runs/:id/sse}: the run's events as Server-Sent Events ({@code id} the event id, {@code event} its
 * type, {@code data} the event as JSON), resuming after {@code Last-Event-ID} (or {@code ?last_event_id}), comments
 * as heartbeats, ended after the run's terminal event.
 * <p>
 * Served by a servlet filter behind the kernel's envelope (request id, error bodies, update gate) and in front of
 * JAX-RS, not by a JAX-RS resource: one event goes to every subscriber of a run, and writing the same prepared bytes
 * to each connection ({@link JettyOutput}) costs a few microseconds per subscriber, where JAX-RS's
 * {@code SseEventSink} serialised and dispatched every event once per subscriber on the container's pool (a
 * thousand subscribers waited tens of milliseconds for the last one). The kernel still decides who the caller is
 * ({@link Authenticator#authenticateReading}) and whose run it is ({@link RunAccess}).
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-1000")
@HttpWhiteboardFilterPattern("/api/runs/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class RunEventStreams implements Filter {

    private static final Logger LOG = LoggerFactory.getLogger(RunEventStreams.class);
    private static final Pattern ROUTE = Pattern.compile("/api/runs/([^/]+)/sse/?");
    private static final Frame HEARTBEAT = new Frame(": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII));
    /** Bytes a client may leave unread before it counts as too slow and is dropped (it resumes with Last-Event-ID). */
    static final int MAX_QUEUED_BYTES = 4 * 1024 * 1024;

    private final Authenticator authenticator;
    private final RunAccess access;
    private final EventHub hub;
    private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
    private final Frames frames = new Frames();
    private volatile boolean open = true;

    @Activate
    public RunEventStreams(@Reference Authenticator authenticator, @Reference RunAccess access, @Reference EventHub hub) {
        this.authenticator = authenticator;
        this.access = access;
        this.hub = hub;
    }

    @Deactivate
    void deactivate() {
        open = false;
        for (Stream s : streams) {
            s.end();
        }
        streams.clear();
    }

    @Override
    public void init(FilterConfig config) {
        // configured by the component
    }

    @Override
    public void destroy() {
        // streams end on deactivate
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Matcher m = ROUTE.matcher(request.getRequestURI());
        if (!m.matches()) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        try {
            if (!"GET".equals(request.getMethod())) {
                response.setHeader("Allow", "GET");
                throw new ApiException(405, "METHOD_NOT_ALLOWED", "method not allowed: " + request.getMethod() + " " + request.getRequestURI());
            }
            if (!open) {
                throw new ApiException(503, "SERVICE_UNAVAILABLE", "run streams are restarting");
            }
            Run run = StreamRequests.authorize(authenticator, access, request, m.group(1));
            long after = StreamRequests.resumeAfter(request);
            org.eclipse.jetty.server.Response connection = JettyOutput.connectionOf(res);
            response.setStatus(200);
            response.setContentType("text/event-stream;charset=UTF-8");
            response.setHeader("Cache-Control", "no-cache, no-store");
            response.setHeader("X-Accel-Buffering", "no");
            AsyncContext async = request.startAsync(request, response);
            async.setTimeout(0);
            Stream stream = new Stream(async, new JettyOutput(connection), frames, sink -> hub.subscribe(run.id(), after, sink),
                    streams::remove);
            streams.add(stream);
            async.addListener(stream);
            stream.start();
        } catch (ApiException e) {
            StreamRequests.writeError(response, e);
        }
    }

    /**
     * Where a stream's bytes go: the headers first ({@link #open}), then one write at a time, each reported once to
     * what {@link #bind} gave, possibly before the call returns.
     */
    interface Output {
        void bind(Runnable done, java.util.function.Consumer<Throwable> failed);

        /** Sends the response's headers. */
        void open();

        void write(Frame frame);

        /** The frames, in order, as one write. */
        void write(List<Frame> frames);
    }

    /**
     * The response on Jetty's connection. The headers go out through Jetty's response; on a persistent HTTP/1.1
     * connection (the usual case, where Jetty frames the body as chunks) every frame after them goes straight to the
     * connection's {@link EndPoint} ({@link ChunkedEndPointOutput}). Through Jetty's response each write also passed
     * its channel state, its chunk generator and a pooled header buffer, and the socket write copied the frame out of
     * the heap: at a thousand subscribers per event that was about a third of the fan-out's CPU. Jetty still ends the
     * response (the last chunk), so the connection stays usable; on any other framing (HTTP/1.0,
     * {@code Connection: close}, HTTP/2) every write goes through Jetty's response.
     */
    static final class JettyOutput implements Output {
        private static final ByteBuffer NOTHING = ByteBuffer.allocate(0);
        private final org.eclipse.jetty.server.Response response;
        private org.eclipse.jetty.util.Callback callback;
        private Runnable done;
        private java.util.function.Consumer<Throwable> failed;
        /** Set once the headers went out, if the body is chunked HTTP/1.1 on a persistent connection. */
        private volatile ChunkedEndPointOutput direct;

        JettyOutput(org.eclipse.jetty.server.Response response) {
            this.response = response;
        }

        /** The Jetty response under Felix's javax wrapper; a 503 if this server is not the Jetty 12 it is built for. */
        static org.eclipse.jetty.server.Response connectionOf(ServletResponse res) {
            try {
                jakarta.servlet.ServletResponse jres = ((org.apache.felix.http.javaxwrappers.ServletResponseWrapper) StreamRequests.unwrap(res)).getResponse();
                org.eclipse.jetty.server.Response r = org.eclipse.jetty.ee10.servlet.ServletContextResponse.getServletContextResponse(jres);
                // the connection's own response: raw frames need no context scope or wrapper on every write
                while (r instanceof org.eclipse.jetty.server.Response.Wrapper w) {
                    r = w.getWrapped();
                }
                return r;
            } catch (RuntimeException | LinkageError e) {
                LOG.warn("event streams need the Jetty 12 HTTP service", e);
                throw new ApiException(503, "SERVICE_UNAVAILABLE", "event streams are not available on this HTTP service");
            }
        }

        @Override
        public void bind(Runnable done, java.util.function.Consumer<Throwable> failed) {
            this.done = done;
            this.failed = failed;
            // one stateless callback for all the stream's writes, not one per frame (a thousand per event)
            this.callback = org.eclipse.jetty.util.Callback.from(done, failed);
        }

        @Override
        public void open() {
            response.write(false, NOTHING, org.eclipse.jetty.util.Callback.from(() -> {
                EndPoint endPoint = chunkedEndPoint();
                if (endPoint != null) {
                    ChunkedEndPointOutput out = new ChunkedEndPointOutput(endPoint);
                    out.bind(done, failed);
                    // Jetty fails only its own pending writes on the connection's idle timeout, not ours
                    response.getRequest().addIdleTimeoutListener(out::idleTimedOut);
                    direct = out;
                }
                done.run();
            }, failed));
        }

        /**
         * The connection's end point if Jetty chose chunks for this body: HTTP/1.1, persistent, no length (Jetty's
         * {@code HttpGenerator} chunks exactly then). Jetty has written nothing of the body, so it owes no chunk's CRLF.
         */
        private EndPoint chunkedEndPoint() {
            org.eclipse.jetty.server.ConnectionMetaData meta = response.getRequest().getConnectionMetaData();
            if (meta.getHttpVersion() != HttpVersion.HTTP_1_1 || !meta.isPersistent()
                    || response.getHeaders().contains(HttpHeader.CONTENT_LENGTH)) {
                return null;
            }
            return meta.getConnection().getEndPoint();
        }

        @Override
        public void write(Frame frame) {
            ChunkedEndPointOutput d = direct;
            if (d != null) {
                d.write(frame);
            } else {
                response.write(false, ByteBuffer.wrap(frame.text), callback);
            }
        }

        @Override
        public void write(List<Frame> frames) {
            ChunkedEndPointOutput d = direct;
            if (d != null) {
                d.write(frames);
                return;
            }
            int size = 0;
            for (Frame f : frames) {
                size += f.text.length;
            }
            ByteBuffer batch = ByteBuffer.allocate(size);
            for (Frame f : frames) {
                batch.put(f.text);
            }
            response.write(false, batch.flip(), callback);
        }
    }

    /**
     * Frames as HTTP/1.1 chunks, written straight to a connection whose response headers went out already: each
     * write one {@code EndPoint.flush} of chunks in direct memory shared by every subscriber; what the socket does not
     * take at once waits in the end point's write flusher, until the connection's idle timeout ({@link #idleTimedOut}).
     */
    static final class ChunkedEndPointOutput implements Output {
        private final EndPoint endPoint;
        private Runnable done;
        private org.eclipse.jetty.util.Callback callback;
        /** A write waits for the socket. */
        private volatile boolean pending;

        ChunkedEndPointOutput(EndPoint endPoint) {
            this.endPoint = endPoint;
        }

        @Override
        public void bind(Runnable done, java.util.function.Consumer<Throwable> failed) {
            this.done = done;
            this.callback = org.eclipse.jetty.util.Callback.from(() -> {
                pending = false;
                done.run();
            }, x -> {
                pending = false;
                failed.accept(x);
            });
        }

        /**
         * The connection was idle for its idle timeout. With a write waiting all that while, the client reads nothing
         * (or is gone without a word): the connection closes, which fails the write and ends the stream. A stream
         * that merely has nothing to say stays (heartbeats keep it from idling).
         */
        boolean idleTimedOut(java.util.concurrent.TimeoutException timeout) {
            if (pending) {
                endPoint.close(timeout);
            }
            return false;
        }

        @Override
        public void open() {
            done.run(); // the headers went out already
        }

        @Override
        public void write(Frame frame) {
            flush(frame.chunk());
        }

        @Override
        public void write(List<Frame> frames) {
            ByteBuffer[] chunks = new ByteBuffer[frames.size()];
            for (int i = 0; i < chunks.length; i++) {
                chunks[i] = frames.get(i).chunk();
            }
            flush(chunks);
        }

        private void flush(ByteBuffer... bytes) {
            try {
                if (endPoint.flush(bytes)) {
                    done.run();
                } else {
                    pending = true;
                    endPoint.write(callback, bytes);
                }
            } catch (IOException | RuntimeException x) {
                callback.failed(x);
            }
        }
    }

    /** An event's SSE bytes, made once for all the run's subscribers. */
    static final class Frame {
        private static final byte[] CRLF = {'\r', '\n'};
        final byte[] text;
        private volatile ByteBuffer chunk;

        Frame(byte[] text) {
            this.text = text;
        }

        /**
         * The frame as one HTTP/1.1 chunk, in direct memory so that a socket write copies nothing; each call a view
         * of its own (a write moves the view's position), the bytes shared.
         */
        ByteBuffer chunk() {
            ByteBuffer c = chunk;
            if (c == null) {
                byte[] size = (Integer.toHexString(text.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
                ByteBuffer b = ByteBuffer.allocateDirect(size.length + text.length + CRLF.length);
                b.put(size).put(text).put(CRLF).flip();
                chunk = c = b.asReadOnlyBuffer(); // made twice at worst, by two lanes at once: the same bytes
            }
            return c.duplicate();
        }
    }

    /**
     * Frames shared by the subscribers of an event. The few events being fanned out right now (one per lane, or one
     * per streaming run) are asked for again and again at the same time: a lock-free ring of the last ones, by
     * identity. Behind it, frames by run, id and time, for events read from the table once per subscriber (backlogs
     * after a reconnect, a lane catching up on more events than the ring holds): up to {@link #SHARED_BYTES}.
     */
    static final class Frames {
        static final int SHARED_BYTES = 8 * 1024 * 1024;

        private record Made(Event event, Frame frame) {
        }

        private record Key(String runId, long id, java.time.Instant createdAt) {
        }

        private final java.util.concurrent.atomic.AtomicReferenceArray<Made> recent = new java.util.concurrent.atomic.AtomicReferenceArray<>(8);
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.LinkedHashMap<Key, Frame> shared = new java.util.LinkedHashMap<>(256, 0.75f, true);
        private long sharedBytes;

        Frame of(Event e) {
            for (int i = 0; i < recent.length(); i++) {
                Made m = recent.get(i);
                if (m != null && m.event == e) {
                    return m.frame;
                }
            }
            Key key = new Key(e.runId(), e.id(), e.createdAt());
            Frame frame;
            synchronized (shared) {
                frame = shared.get(key);
            }
            if (frame == null) {
                frame = new Frame(("id: " + e.id() + "\nevent: " + e.type() + "\ndata: " + e.toJsonText() + "\n\n").getBytes(StandardCharsets.UTF_8));
                synchronized (shared) {
                    Frame earlier = shared.putIfAbsent(key, frame);
                    if (earlier != null) {
                        frame = earlier;
                    } else {
                        sharedBytes += frame.text.length;
                        for (var oldest = shared.entrySet().iterator(); sharedBytes > SHARED_BYTES && oldest.hasNext();) {
                            sharedBytes -= oldest.next().getValue().text.length;
                            oldest.remove();
                        }
                    }
                }
            }
            recent.set(Math.floorMod(next.getAndIncrement(), recent.length()), new Made(e, frame));
            return frame;
        }
    }

    /**
     * One client. Frames queue here and go out in one write when the previous write is done, never blocking the
     * thread that hands them over; a client that leaves {@link #MAX_QUEUED_BYTES} unread is dropped.
     */
    static final class Stream implements EventHub.Sink, AsyncListener {
        private final java.util.function.Function<Stream, EventHub.Subscription> subscribe;
        private final java.util.function.Consumer<Stream> ended;
        private final Frames frames;
        private final AsyncContext async;
        private final Output out;
        private final ArrayDeque<Frame> queue = new ArrayDeque<>();
        private int queuedBytes;
        private boolean started;
        private int held;
        private boolean writing;
        private boolean closing;
        private boolean completed;
        private volatile boolean failed;
        private volatile EventHub.Subscription subscription;

        /** {@code subscribe} is called once, by {@link #start}; {@code ended} when the stream ends. */
        Stream(AsyncContext async, Output out, Frames frames, java.util.function.Function<Stream, EventHub.Subscription> subscribe,
                java.util.function.Consumer<Stream> ended) {
            this.async = async;
            this.out = out;
            this.frames = frames;
            this.subscribe = subscribe;
            this.ended = ended;
            out.bind(this::written, this::writeFailed);
        }

        /** Sends the headers, then subscribes: the backlog and live events follow. */
        void start() {
            synchronized (this) {
                if (started) {
                    return;
                }
                started = true;
                writing = true;
                out.open();
            }
            // outside this stream's lock: a fan-out holds the subscription's lock and then takes this one
            EventHub.Subscription s = subscribe.apply(this);
            subscription = s;
            if (failed && s != null) {
                s.close(false);
            }
        }

        @Override
        public boolean send(Event event) {
            return offer(frames.of(event));
        }

        @Override
        public boolean heartbeat() {
            return offer(HEARTBEAT);
        }

        @Override
        public synchronized void hold() {
            held++;
        }

        @Override
        public synchronized void release() {
            if (--held == 0) {
                drain();
            }
        }

        @Override
        public synchronized void close(boolean terminal) {
            closing = true;
            if (failed) {
                complete();
            } else {
                drain();
            }
        }

        private synchronized boolean offer(Frame frame) {
            if (failed || closing) {
                return false;
            }
            if (queuedBytes + frame.text.length > MAX_QUEUED_BYTES) {
                fail();
                return false;
            }
            queue.add(frame);
            queuedBytes += frame.text.length;
            drain();
            return !failed;
        }

        /** Starts the next write (everything queued, in order, as one write) unless one is under way; holds the lock. */
        private void drain() {
            if (!started || writing || held > 0 || completed || failed) {
                return;
            }
            if (queue.isEmpty()) {
                if (closing) {
                    complete();
                }
                return;
            }
            queuedBytes = 0;
            writing = true;
            try {
                if (queue.size() == 1) {
                    out.write(queue.poll());
                } else {
                    List<Frame> batch = new ArrayList<>(queue);
                    queue.clear();
                    out.write(batch);
                }
            } catch (RuntimeException | Error e) { // an Error too (no direct memory left): the stream must not stay "writing"
                writing = false;
                fail();
                if (e instanceof Error err) {
                    throw err;
                }
            }
        }

        private synchronized void written() {
            writing = false;
            if (failed) {
                complete();
            } else {
                drain();
            }
        }

        private synchronized void writeFailed(Throwable t) {
            writing = false;
            if (failed) {
                complete();
            } else {
                fail();
            }
        }

        /** The client is gone or too slow: no later frame is written, the subscription ends. */
        private void fail() {
            if (failed) {
                return;
            }
            failed = true;
            queue.clear();
            queuedBytes = 0;
            complete();
            EventHub.Subscription s = subscription;
            if (s != null) {
                s.close(false);
            }
        }

        private void complete() {
            if (completed || writing) {
                return; // a write under way: its outcome completes the stream
            }
            completed = true;
            ended.accept(this);
            try {
                async.complete();
            } catch (RuntimeException e) {
                LOG.debug("completing an event stream", e);
            }
        }

        /** This bundle stops: the client reconnects (to the new version) and resumes with Last-Event-ID. */
        synchronized void end() {
            fail();
        }

        @Override
        public void onComplete(AsyncEvent event) {
            ended.accept(this);
            EventHub.Subscription s = subscription;
            if (s != null) {
                s.close(false);
            }
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            end();
        }

        @Override
        public void onError(AsyncEvent event) {
            end();
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // not restarted
        }
    }
}
