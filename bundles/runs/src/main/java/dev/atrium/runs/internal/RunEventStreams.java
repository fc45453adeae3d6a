package dev.atrium.runs.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
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
 * to each connection through Jetty's response costs a few microseconds per subscriber, where JAX-RS's
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
    private static final byte[] HEARTBEAT = ": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII);
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
     * Where a stream's bytes go: one write at a time, each reported once to what {@link #bind} gave, possibly before
     * {@code write} returns.
     */
    interface Output {
        void bind(Runnable done, java.util.function.Consumer<Throwable> failed);

        void write(ByteBuffer bytes);
    }

    /**
     * Jetty's own response, below the servlet layer: a write is one call that goes to the socket at once (or reports
     * later when the socket is full). Through {@code ServletOutputStream} the same frame took five calls into the
     * servlet output's state machine (readiness, aggregation, flush); at a thousand subscribers per event that was a
     * third of the fan-out's CPU. Headers and the end of the response still go through the servlet API.
     */
    static final class JettyOutput implements Output {
        private final org.eclipse.jetty.server.Response response;

        JettyOutput(org.eclipse.jetty.server.Response response) {
            this.response = response;
        }

        /** The Jetty response under Felix's javax wrapper; a 503 if this server is not the Jetty 12 it is built for. */
        static org.eclipse.jetty.server.Response connectionOf(ServletResponse res) {
            try {
                jakarta.servlet.ServletResponse jres = ((org.apache.felix.http.javaxwrappers.ServletResponseWrapper) unwrap(res)).getResponse();
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

        private static ServletResponse unwrap(ServletResponse res) {
            ServletResponse r = res;
            while (r instanceof javax.servlet.ServletResponseWrapper w) {
                r = w.getResponse();
            }
            return r;
        }

        /** One stateless callback for all the stream's writes, not one per frame (a thousand per event). */
        private org.eclipse.jetty.util.Callback callback;

        @Override
        public void bind(Runnable done, java.util.function.Consumer<Throwable> failed) {
            callback = org.eclipse.jetty.util.Callback.from(done, failed);
        }

        @Override
        public void write(ByteBuffer bytes) {
            response.write(false, bytes, callback);
        }
    }

    /** The SSE bytes of an event, made once for all the run's subscribers (they are handed the same event in turn). */
    static final class Frames {
        private record Made(Event event, byte[] frame) {
        }

        private volatile Made last;

        byte[] of(Event e) {
            Made m = last;
            if (m != null && m.event == e) {
                return m.frame;
            }
            byte[] frame = ("id: " + e.id() + "\nevent: " + e.type() + "\ndata: " + e.toJsonText() + "\n\n").getBytes(StandardCharsets.UTF_8);
            last = new Made(e, frame);
            return frame;
        }
    }

    /**
     * One client. Frames queue here and go out in one write when the previous write is done, never blocking the
     * thread that hands them over; a client that leaves {@link #MAX_QUEUED_BYTES} unread is dropped.
     */
    static final class Stream implements EventHub.Sink, AsyncListener {
        private static final ByteBuffer NOTHING = ByteBuffer.allocate(0);
        private final java.util.function.Function<Stream, EventHub.Subscription> subscribe;
        private final java.util.function.Consumer<Stream> ended;
        private final Frames frames;
        private final AsyncContext async;
        private final Output out;
        private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
        private int queuedBytes;
        private boolean started;
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
                out.write(NOTHING);
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
        public synchronized void close(boolean terminal) {
            closing = true;
            if (failed) {
                complete();
            } else {
                drain();
            }
        }

        private synchronized boolean offer(byte[] frame) {
            if (failed || closing) {
                return false;
            }
            if (queuedBytes + frame.length > MAX_QUEUED_BYTES) {
                fail();
                return false;
            }
            queue.add(frame);
            queuedBytes += frame.length;
            drain();
            return !failed;
        }

        /** Starts the next write (everything queued, in order, as one buffer) unless one is under way; holds the lock. */
        private void drain() {
            if (!started || writing || completed || failed) {
                return;
            }
            if (queue.isEmpty()) {
                if (closing) {
                    complete();
                }
                return;
            }
            ByteBuffer batch;
            if (queue.size() == 1) {
                batch = ByteBuffer.wrap(queue.poll());
            } else {
                batch = ByteBuffer.allocate(queuedBytes);
                for (byte[] f; (f = queue.poll()) != null;) {
                    batch.put(f);
                }
                batch.flip();
            }
            queuedBytes = 0;
            writing = true;
            try {
                out.write(batch);
            } catch (RuntimeException e) {
                fail();
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
