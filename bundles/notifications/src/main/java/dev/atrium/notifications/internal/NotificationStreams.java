package dev.atrium.notifications.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

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

import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServerContainer;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
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
import dev.atrium.kernel.api.Caller;
import dev.atrium.notifications.internal.NotificationStore.Notification;

/**
 * {@code GET /api/notifications/sse} and {@code GET /api/notifications/ws}: the caller's notifications as they are
 * posted, on any instance. SSE: {@code id} the stream position, {@code event: notification}, {@code data} the
 * notification as JSON; comments as heartbeats. WebSocket: one text message (the notification JSON, whose
 * {@code seq} is the stream position) per notification, pings as heartbeats, 1012 when this bundle stops. Both
 * resume after {@code Last-Event-ID} (or {@code ?last_event_id}); without one they start at the present.
 * <p>
 * Served as the run streams are: a servlet filter behind the kernel's envelope and in front of JAX-RS, each
 * notification's bytes made once and written to every subscriber's Jetty connection without blocking the thread
 * that fans it out; a client that leaves {@link #MAX_QUEUED_BYTES} unread is dropped (it resumes).
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-1000")
@HttpWhiteboardFilterPattern("/api/notifications/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class NotificationStreams implements Filter {

    private static final Logger LOG = LoggerFactory.getLogger(NotificationStreams.class);
    private static final byte[] HEARTBEAT = ": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII);
    static final int MAX_QUEUED_BYTES = 1024 * 1024;
    static final int MAX_PENDING_MESSAGES = 256;

    private final Authenticator authenticator;
    private final NotificationStore store;
    private final NotificationHub hub;
    private final Set<Runnable> open = ConcurrentHashMap.newKeySet();
    private final Frames frames = new Frames();
    private volatile boolean serving = true;

    @Activate
    public NotificationStreams(@Reference Authenticator authenticator, @Reference NotificationStore store, @Reference NotificationHub hub) {
        this.authenticator = authenticator;
        this.store = store;
        this.hub = hub;
    }

    @Deactivate
    void deactivate() {
        serving = false;
        for (Runnable end : open) {
            end.run();
        }
        open.clear();
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
        String uri = request.getRequestURI();
        boolean sse = uri.equals("/api/notifications/sse") || uri.equals("/api/notifications/sse/");
        boolean ws = uri.equals("/api/notifications/ws") || uri.equals("/api/notifications/ws/");
        if (!sse && !ws) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        try {
            if (!"GET".equals(request.getMethod())) {
                response.setHeader("Allow", "GET");
                throw new ApiException(405, "METHOD_NOT_ALLOWED", "method not allowed: " + request.getMethod() + " " + uri);
            }
            if (!serving) {
                throw new ApiException(503, "SERVICE_UNAVAILABLE", "notification streams are restarting");
            }
            Caller caller = StreamRequests.authorize(authenticator, request);
            long after = StreamRequests.resumeAfter(request, store, caller.principalId());
            if (sse) {
                openSse(request, response, caller.principalId(), after);
            } else {
                openWebSocket(req, res, response, request, caller.principalId(), after);
            }
        } catch (ApiException e) {
            StreamRequests.writeError(response, e);
        }
    }

    private void openSse(HttpServletRequest request, HttpServletResponse response, String principalId, long after) {
        org.eclipse.jetty.server.Response connection = connectionOf(response);
        response.setStatus(200);
        response.setContentType("text/event-stream;charset=UTF-8");
        response.setHeader("Cache-Control", "no-cache, no-store");
        response.setHeader("X-Accel-Buffering", "no");
        AsyncContext async = request.startAsync(request, response);
        async.setTimeout(0);
        SseStream stream = new SseStream(async, connection);
        open.add(stream.end);
        async.addListener(stream);
        stream.start(principalId, after);
    }

    /** The Jetty response under Felix's javax wrapper; a 503 if this server is not the Jetty 12 it is built for. */
    static org.eclipse.jetty.server.Response connectionOf(ServletResponse res) {
        try {
            jakarta.servlet.ServletResponse jres = ((org.apache.felix.http.javaxwrappers.ServletResponseWrapper) StreamRequests.unwrap(res)).getResponse();
            org.eclipse.jetty.server.Response r = org.eclipse.jetty.ee10.servlet.ServletContextResponse.getServletContextResponse(jres);
            while (r instanceof org.eclipse.jetty.server.Response.Wrapper w) {
                r = w.getWrapped();
            }
            return r;
        } catch (RuntimeException | LinkageError e) {
            LOG.warn("notification streams need the Jetty 12 HTTP service", e);
            throw new ApiException(503, "SERVICE_UNAVAILABLE", "event streams are not available on this HTTP service");
        }
    }

    /** A notification's SSE bytes, made once for all its Principal's subscribers (the last few kept by identity). */
    static final class Frames {
        private record Made(Notification n, byte[] frame) {
        }

        private final AtomicReferenceArray<Made> recent = new AtomicReferenceArray<>(16);
        private final AtomicInteger next = new AtomicInteger();

        byte[] of(Notification n) {
            for (int i = 0; i < recent.length(); i++) {
                Made m = recent.get(i);
                if (m != null && m.n == n) {
                    return m.frame;
                }
            }
            byte[] frame = ("id: " + n.seq() + "\nevent: notification\ndata: " + n.json() + "\n\n").getBytes(StandardCharsets.UTF_8);
            recent.set(Math.floorMod(next.getAndIncrement(), recent.length()), new Made(n, frame));
            return frame;
        }
    }

    /** One SSE client: frames queue here and go out one write at a time, never blocking the fan-out. */
    final class SseStream implements NotificationHub.Sink, AsyncListener {
        private final AsyncContext async;
        private final org.eclipse.jetty.server.Response connection;
        private final org.eclipse.jetty.util.Callback written;
        private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
        final Runnable end = this::end;
        private int queuedBytes;
        private int held;
        private boolean writing;
        private boolean completed;
        private volatile boolean failed;
        private volatile NotificationHub.Subscription subscription;

        SseStream(AsyncContext async, org.eclipse.jetty.server.Response connection) {
            this.async = async;
            this.connection = connection;
            this.written = org.eclipse.jetty.util.Callback.from(this::written, x -> failed());
        }

        void start(String principalId, long after) {
            synchronized (this) {
                writing = true; // the headers first
                connection.write(false, ByteBuffer.allocate(0), written);
            }
            NotificationHub.Subscription s = hub.subscribe(principalId, after, this);
            subscription = s;
            if (failed) {
                s.close();
            }
        }

        @Override
        public boolean send(Notification n) {
            return offer(frames.of(n));
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
        public synchronized void close() {
            failed = true;
            queue.clear();
            complete();
        }

        private synchronized boolean offer(byte[] frame) {
            if (failed) {
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

        private void drain() {
            if (writing || held > 0 || failed || queue.isEmpty()) {
                return;
            }
            ByteBuffer bytes;
            if (queue.size() == 1) {
                bytes = ByteBuffer.wrap(queue.poll());
            } else {
                bytes = ByteBuffer.allocate(queuedBytes);
                for (byte[] f : queue) {
                    bytes.put(f);
                }
                bytes.flip();
                queue.clear();
            }
            queuedBytes = 0;
            writing = true;
            try {
                connection.write(false, bytes, written);
            } catch (RuntimeException e) {
                writing = false;
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

        private synchronized void failed() {
            writing = false;
            fail();
        }

        private void fail() {
            if (failed && completed) {
                return;
            }
            failed = true;
            queue.clear();
            queuedBytes = 0;
            complete();
            NotificationHub.Subscription s = subscription;
            if (s != null) {
                s.close();
            }
        }

        private void complete() {
            if (completed || writing) {
                return; // the write under way completes the stream
            }
            completed = true;
            open.remove(end);
            try {
                async.complete();
            } catch (RuntimeException e) {
                LOG.debug("completing a notification stream", e);
            }
        }

        /** This bundle stops: the client reconnects and resumes with Last-Event-ID. */
        synchronized void end() {
            fail();
        }

        @Override
        public void onComplete(AsyncEvent event) {
            NotificationHub.Subscription s = subscription;
            if (s != null) {
                s.close();
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

    private void openWebSocket(ServletRequest req, ServletResponse res, HttpServletResponse response, HttpServletRequest request,
            String principalId, long after) throws IOException {
        if (!"websocket".equalsIgnoreCase(request.getHeader("Upgrade"))) {
            throw new ApiException(426, "UPGRADE_REQUIRED", "this route is a WebSocket: send Upgrade: websocket");
        }
        jakarta.servlet.http.HttpServletRequest jreq = (jakarta.servlet.http.HttpServletRequest)
                ((org.apache.felix.http.javaxwrappers.ServletRequestWrapper) StreamRequests.unwrap(req)).getRequest();
        jakarta.servlet.http.HttpServletResponse jres = (jakarta.servlet.http.HttpServletResponse)
                ((org.apache.felix.http.javaxwrappers.ServletResponseWrapper) StreamRequests.unwrap(res)).getResponse();
        ServletContextHandler handler = ServletContextHandler.getCurrentServletContextHandler();
        JettyWebSocketServerContainer container = JettyWebSocketServerContainer.getContainer(handler.getServletContext());
        if (container == null) {
            throw new ApiException(503, "SERVICE_UNAVAILABLE", "WebSocket support is not enabled on this server");
        }
        if (!container.upgrade((upgradeRequest, upgradeResponse) -> new Endpoint(principalId, after), jreq, jres) && !response.isCommitted()) {
            throw ApiException.badRequest("not a valid WebSocket handshake");
        }
    }

    /** One WebSocket client: a subscription to its Principal's notifications. */
    public final class Endpoint implements Session.Listener.AutoDemanding, NotificationHub.Sink {
        private final String principalId;
        private final long after;
        private final AtomicInteger pending = new AtomicInteger();
        private final Runnable end = this::goingAway;
        private volatile Session session;
        private volatile NotificationHub.Subscription subscription;
        private volatile boolean failed;

        Endpoint(String principalId, long after) {
            this.principalId = principalId;
            this.after = after;
        }

        @Override
        public void onWebSocketOpen(Session s) {
            session = s;
            open.add(end);
            subscription = hub.subscribe(principalId, after, this);
        }

        private void goingAway() {
            Session s = session;
            if (s != null && s.isOpen()) {
                s.close(1012, "the server is restarting this service", Callback.NOOP);
            }
        }

        @Override
        public boolean send(Notification n) {
            return await(c -> session.sendText(n.json(), c));
        }

        @Override
        public boolean heartbeat() {
            return await(c -> session.sendPing(ByteBuffer.wrap(new byte[] {'h', 'b'}), c));
        }

        @Override
        public void close() {
            Session s = session;
            if (s != null && s.isOpen()) {
                s.close(1001, "going away", Callback.NOOP);
            }
        }

        /** Never blocks the fan-out: a client with {@link #MAX_PENDING_MESSAGES} unsent is dropped (it resumes). */
        private boolean await(java.util.function.Consumer<Callback> send) {
            Session s = session;
            if (s == null || !s.isOpen() || failed) {
                return false;
            }
            if (pending.incrementAndGet() > MAX_PENDING_MESSAGES) {
                pending.decrementAndGet();
                failed = true;
                return false;
            }
            send.accept(Callback.from(pending::decrementAndGet, error -> {
                pending.decrementAndGet();
                failed = true;
                NotificationHub.Subscription sub = subscription;
                if (sub != null) {
                    sub.close();
                }
            }));
            return !failed;
        }

        @Override
        public void onWebSocketClose(int status, String reason) {
            open.remove(end);
            NotificationHub.Subscription sub = subscription;
            if (sub != null) {
                sub.close();
            }
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            onWebSocketClose(1011, String.valueOf(cause));
        }
    }
}
