package dev.atrium.runs.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
import dev.atrium.runs.internal.RunStore.Event;
import dev.atrium.runs.internal.RunStore.Run;

/**
 * {@code GET /api/runs/:id/ws}: the run's events over a WebSocket, one text message (the event JSON) per event, in
 * id order, resuming after {@code Last-Event-ID} or {@code ?last_event_id}; pings keep it alive; closed with 1000
 * after the terminal event, with 1012 when this bundle stops (clients reconnect to the new version). A servlet
 * filter behind the kernel's envelope (request id, error bodies, update gate) and in front of the JAX-RS servlet
 * authenticates the handshake with the kernel's {@link Authenticator} (bearer token or browser session, see {@link StreamRequests}), proves the run's workspace, and upgrades through Jetty's
 * WebSocket container; every other request passes on untouched.
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-1000")
@HttpWhiteboardFilterPattern("/api/runs/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class RunWebSockets implements Filter {

    private static final Logger LOG = LoggerFactory.getLogger(RunWebSockets.class);
    private static final Pattern ROUTE = Pattern.compile("/api/runs/([^/]+)/ws/?");

    private final Authenticator authenticator;
    private final RunAccess access;
    private final EventHub hub;
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    @Activate
    public RunWebSockets(@Reference Authenticator authenticator, @Reference RunAccess access, @Reference EventHub hub) {
        this.authenticator = authenticator;
        this.access = access;
        this.hub = hub;
    }

    @Deactivate
    void deactivate() {
        open = false;
        for (Session s : sessions) {
            try {
                s.close(1012, "the server is restarting this service", Callback.NOOP);
            } catch (RuntimeException e) {
                LOG.debug("closing a run WebSocket", e);
            }
        }
        sessions.clear();
    }

    @Override
    public void init(FilterConfig config) {
        // configured by the component
    }

    @Override
    public void destroy() {
        // sessions are closed on deactivate
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Matcher m = ROUTE.matcher(request.getRequestURI());
        if (!m.matches() || !"GET".equals(request.getMethod())) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        try {
            if (!open) {
                throw new ApiException(503, "SERVICE_UNAVAILABLE", "run streams are restarting");
            }
            Run run = StreamRequests.authorize(authenticator, access, request, m.group(1));
            long after = StreamRequests.resumeAfter(request);
            if (!"websocket".equalsIgnoreCase(request.getHeader("Upgrade"))) {
                throw new ApiException(426, "UPGRADE_REQUIRED", "this route is a WebSocket: send Upgrade: websocket");
            }
            // Jetty upgrades the container's own exchange; the 101 goes out on it, past the kernel's error capture
            jakarta.servlet.http.HttpServletRequest jreq = (jakarta.servlet.http.HttpServletRequest)
                    ((org.apache.felix.http.javaxwrappers.ServletRequestWrapper) StreamRequests.unwrap(req)).getRequest();
            jakarta.servlet.http.HttpServletResponse jres = (jakarta.servlet.http.HttpServletResponse)
                    ((org.apache.felix.http.javaxwrappers.ServletResponseWrapper) StreamRequests.unwrap(res)).getResponse();
            ServletContextHandler handler = ServletContextHandler.getCurrentServletContextHandler();
            JettyWebSocketServerContainer container = JettyWebSocketServerContainer.getContainer(handler.getServletContext());
            if (container == null) {
                throw new ApiException(503, "SERVICE_UNAVAILABLE", "WebSocket support is not enabled on this server");
            }
            if (!container.upgrade((upgradeRequest, upgradeResponse) -> new Endpoint(run.id(), after), jreq, jres)) {
                if (!response.isCommitted()) {
                    throw ApiException.badRequest("not a valid WebSocket handshake");
                }
            }
        } catch (ApiException e) {
            StreamRequests.writeError(response, e);
        }
    }

    /** Frames a WebSocket client may have queued and unsent before it counts as too slow and is dropped. */
    static final int MAX_PENDING = 256;

    /** One client: a subscription to the run's events. */
    public final class Endpoint implements Session.Listener.AutoDemanding {
        private final String runId;
        private final long after;
        private volatile Session session;
        private volatile EventHub.Subscription subscription;
        private final java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger();
        private volatile boolean failed;

        Endpoint(String runId, long after) {
            this.runId = runId;
            this.after = after;
        }

        @Override
        public void onWebSocketOpen(Session s) {
            session = s;
            sessions.add(s);
            subscription = hub.subscribe(runId, after, new EventHub.Sink() {
                @Override
                public boolean send(Event event) {
                    return await(c -> s.sendText(event.toJsonText(), c));
                }

                @Override
                public boolean heartbeat() {
                    return await(c -> s.sendPing(ByteBuffer.wrap("hb".getBytes(StandardCharsets.US_ASCII)), c));
                }

                @Override
                public void close(boolean terminal) {
                    if (s.isOpen()) {
                        s.close(terminal ? 1000 : 1001, terminal ? "the run has finished" : "going away", Callback.NOOP);
                    }
                }
            });
        }

        /**
         * Never blocks the fan-out thread: the frame is queued with Jetty and its outcome arrives later. A client with
         * {@link #MAX_PENDING} frames still unsent is too slow: it is dropped (and resumes with Last-Event-ID); a frame
         * that fails closes the session, and no later frame is sent after it.
         */
        private boolean await(java.util.function.Consumer<Callback> send) {
            Session s = session;
            if (s == null || !s.isOpen() || failed) {
                return false;
            }
            if (pending.incrementAndGet() > MAX_PENDING) {
                pending.decrementAndGet();
                failed = true;
                return false;
            }
            send.accept(Callback.from(pending::decrementAndGet, error -> {
                pending.decrementAndGet();
                failed = true;
                EventHub.Subscription sub = subscription;
                if (sub != null) {
                    sub.close(false);
                }
            }));
            return !failed;
        }

        @Override
        public void onWebSocketClose(int status, String reason) {
            Session s = session;
            if (s != null) {
                sessions.remove(s);
            }
            EventHub.Subscription sub = subscription;
            if (sub != null) {
                sub.close(false);
            }
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            onWebSocketClose(1011, String.valueOf(cause));
        }
    }
}
