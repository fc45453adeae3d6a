package dev.atrium.services.internal;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServerContainer;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSockets to a service's deployment through Host routing: the client's WebSocket ends in Jetty's server container
 * and a second one, the JDK's client, goes to the worker; every message is relayed as it comes, fragment by fragment
 * (text, binary, ping and pong, close with its code and reason). The handshake to the worker is made first, with the
 * client's subprotocols: the worker's choice is the one the client gets, and a worker that refuses (any answer but 101)
 * refuses the client with that answer. Neither direction buffers: a frame is read from one side only once the previous
 * one was written to the other (Jetty's {@code demand()}, the JDK's {@code request(1)}), so a slow reader slows its
 * sender through TCP, never the heap. The JDK client's callbacks run on a small pool of this object's own; nothing
 * blocks on them. Public, as its {@link Relay} is: Jetty builds method handles for the endpoint's callbacks.
 */
public final class WorkerWebSockets implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WorkerWebSockets.class);
    /** How long the worker may take to answer the handshake. */
    static final Duration HANDSHAKE = Duration.ofSeconds(10);
    /** A relayed WebSocket with no frame either way for this long is closed (as Upstream's socket timeout). */
    static final Duration IDLE = Duration.ofMinutes(5);
    /** Cloudflare's limit for a WebSocket message to a worker. */
    static final long MAX_MESSAGE = 32L << 20;
    /** How long the worker has to answer a close the client started before its connection is dropped. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    private final ThreadPoolExecutor callbacks;
    private final HttpClient client;
    private final Set<Relay> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    WorkerWebSockets() {
        AtomicInteger n = new AtomicInteger();
        // the JDK client's listener callbacks and handshake completions: short, never blocking
        this.callbacks = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "atrium-worker-ws-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        callbacks.allowCoreThreadTimeOut(true);
        this.client = HttpClient.newBuilder().executor(callbacks).connectTimeout(Duration.ofSeconds(5)).version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    /** Whether the request asks to become a WebSocket (RFC 6455 4.1): a GET with {@code Upgrade: websocket}. */
    static boolean isUpgrade(HttpServletRequest request) {
        if (!"GET".equals(request.getMethod())) {
            return false;
        }
        for (Enumeration<String> values = request.getHeaders("Upgrade"); values.hasMoreElements();) {
            for (String token : values.nextElement().split(",")) {
                if (token.trim().equalsIgnoreCase("websocket")) {
                    return true;
                }
            }
        }
        return false;
    }

    int openRelays() {
        return open.size();
    }

    /**
     * Relays the client's WebSocket to {@code target} ({@code ws://} on the deployment's endpoint): the handshake to the
     * worker first, then the client's upgrade with the worker's subprotocol. {@code rawRequest}/{@code rawResponse} are
     * the ones the filter was given (Felix's javax wrappers of the container's own exchange, which Jetty upgrades).
     */
    void relay(URI target, HttpServletRequest request, HttpServletResponse response, ServletRequest rawRequest, ServletResponse rawResponse,
            Upstream.Forwarded fwd) throws IOException {
        if (closed) {
            HostRouter.error(response, 503, "SERVICE_UNAVAILABLE", "the server is restarting this service; try again");
            return;
        }
        String key = request.getHeader("Sec-WebSocket-Key");
        if (key == null || key.isBlank()) {
            HostRouter.error(response, 400, "BAD_REQUEST", "a WebSocket handshake needs Sec-WebSocket-Key");
            return;
        }
        if (!"13".equals(request.getHeader("Sec-WebSocket-Version"))) {
            response.setHeader("Sec-WebSocket-Version", "13");
            HostRouter.error(response, 426, "UPGRADE_REQUIRED", "only WebSocket version 13 is spoken");
            return;
        }
        ServletContextHandler handler = ServletContextHandler.getCurrentServletContextHandler();
        JettyWebSocketServerContainer container = handler == null ? null : JettyWebSocketServerContainer.getContainer(handler.getServletContext());
        if (container == null) {
            HostRouter.error(response, 501, "NOT_IMPLEMENTED", "WebSocket support is not enabled on this server");
            return;
        }

        Relay relay = new Relay(target);
        WebSocket.Builder builder = client.newWebSocketBuilder().connectTimeout(HANDSHAKE);
        List<String> protocols = protocols(request);
        if (!protocols.isEmpty()) {
            builder.subprotocols(protocols.get(0), protocols.subList(1, protocols.size()).toArray(String[]::new));
        }
        for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements();) {
            String name = names.nextElement();
            if (!passed(name, fwd)) {
                continue;
            }
            for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements();) {
                String v = values.nextElement();
                try {
                    builder.header(name, v);
                } catch (IllegalArgumentException restricted) {
                    // a name or value the JDK's client will not send: the worker does without it
                }
            }
        }
        builder.header("x-forwarded-for", fwd.forwardedFor());
        builder.header("x-forwarded-proto", fwd.proto());
        if (fwd.host() != null) {
            // the JDK's client sends the worker's own address as Host (it may not be set): the client's is here
            builder.header("x-forwarded-host", fwd.host());
        }
        CompletableFuture<WebSocket> handshake = builder.buildAsync(target, relay.fromWorker).toCompletableFuture();
        WebSocket worker;
        try {
            worker = handshake.get(HANDSHAKE.toMillis() + 1_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof WebSocketHandshakeException refused) {
                refusal(refused.getResponse(), response);
            } else {
                LOG.debug("services: the WebSocket handshake to {} failed: {}", target, String.valueOf(cause));
                HostRouter.error(response, 502, "BAD_GATEWAY", "the service's deployment did not answer the WebSocket handshake");
            }
            return;
        } catch (TimeoutException e) {
            handshake.cancel(true);
            handshake.thenAccept(WebSocket::abort);
            HostRouter.error(response, 504, "GATEWAY_TIMEOUT", "the service's deployment did not answer the WebSocket handshake in time");
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            handshake.thenAccept(WebSocket::abort);
            return;
        }
        relay.worker = worker;
        String chosen = worker.getSubprotocol();
        // counted from here: a client that goes away before its WebSocket opens still has its worker's closed on stop
        open.add(relay);
        if (closed) {
            relay.shutDown();
            return;
        }

        // Jetty upgrades the container's own exchange: the 101 goes out on it
        jakarta.servlet.http.HttpServletRequest jreq = (jakarta.servlet.http.HttpServletRequest)
                ((org.apache.felix.http.javaxwrappers.ServletRequestWrapper) unwrap(rawRequest)).getRequest();
        jakarta.servlet.http.HttpServletResponse jres = (jakarta.servlet.http.HttpServletResponse)
                ((org.apache.felix.http.javaxwrappers.ServletResponseWrapper) unwrap(rawResponse)).getResponse();
        boolean upgraded;
        try {
            upgraded = container.upgrade((upgradeRequest, upgradeResponse) -> {
                if (chosen != null && !chosen.isEmpty()) {
                    upgradeResponse.setAcceptedSubProtocol(chosen);
                }
                return relay;
            }, jreq, jres);
        } catch (IOException | RuntimeException e) {
            relay.shutDown();
            throw e;
        }
        if (!upgraded) {
            relay.shutDown();
            if (!response.isCommitted()) {
                HostRouter.error(response, 400, "BAD_REQUEST", "not a valid WebSocket handshake");
            }
        }
    }

    /** The client's subprotocols, in its order of preference. */
    private static List<String> protocols(HttpServletRequest request) {
        List<String> out = new ArrayList<>();
        for (Enumeration<String> values = request.getHeaders("Sec-WebSocket-Protocol"); values.hasMoreElements();) {
            for (String p : values.nextElement().split(",")) {
                String t = p.trim();
                if (!t.isEmpty() && !out.contains(t)) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    /** The client's headers that go on to the worker: not the handshake's own (each hop makes its own), nor ours. */
    private static boolean passed(String name, Upstream.Forwarded fwd) {
        String n = name.toLowerCase(Locale.ROOT);
        return !(Upstream.hop(n) || n.equals("host") || n.startsWith("sec-websocket-") || n.equals("x-forwarded-for") || n.equals("x-forwarded-proto")
                || n.equals("x-forwarded-host") || n.equalsIgnoreCase(fwd.dropped()));
    }

    /** The worker's refusal, passed to the client as it was answered (status, headers, body). */
    private static void refusal(java.net.http.HttpResponse<?> answer, HttpServletResponse response) throws IOException {
        response.setStatus(answer.statusCode());
        HttpHeaders headers = answer.headers();
        headers.map().forEach((name, values) -> {
            if (!Upstream.hop(name)) {
                for (String v : values) {
                    response.addHeader(name, v);
                }
            }
        });
        Object body = answer.body();
        // the JDK's client read the refusal's body as text, in the charset its Content-Type names (else UTF-8)
        byte[] bytes = body == null ? new byte[0] : body.toString().getBytes(charset(headers.firstValue("content-type").orElse("")));
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    private static java.nio.charset.Charset charset(String contentType) {
        for (String param : contentType.split(";")) {
            String p = param.trim();
            if (p.regionMatches(true, 0, "charset=", 0, 8)) {
                try {
                    return java.nio.charset.Charset.forName(p.substring(8).replace("\"", "").trim());
                } catch (IllegalArgumentException unknown) {
                    break;
                }
            }
        }
        return StandardCharsets.UTF_8;
    }

    private static ServletRequest unwrap(ServletRequest req) {
        ServletRequest r = req;
        while (r instanceof javax.servlet.ServletRequestWrapper w) {
            r = w.getRequest();
        }
        return r;
    }

    private static ServletResponse unwrap(ServletResponse res) {
        ServletResponse r = res;
        while (r instanceof javax.servlet.ServletResponseWrapper w) {
            r = w.getResponse();
        }
        return r;
    }

    /** Closes every relayed WebSocket (1012: clients reconnect to the new version) and the client's callback pool. */
    @Override
    public void close() {
        closed = true;
        for (Relay r : open) {
            r.shutDown();
        }
        open.clear();
        callbacks.shutdown();
    }

    /**
     * One client's WebSocket and the worker's: Jetty's endpoint toward the client, {@link #fromWorker} toward the
     * worker. Each direction has at most one frame in flight; the next is asked for when it was written.
     */
    public final class Relay implements Session.Listener {
        private final URI target;
        volatile WebSocket worker;
        private volatile Session client;
        private final AtomicBoolean finished = new AtomicBoolean();
        /** The worker closed, or its connection failed, maybe before the client's WebSocket was open: with this code. */
        private volatile boolean workerGone;
        private volatile int workerCode = 1001;
        private volatile String workerReason = "the service's deployment went away";
        final WebSocket.Listener fromWorker = new FromWorker();

        Relay(URI target) {
            this.target = target;
        }

        @Override
        public void onWebSocketOpen(Session session) {
            client = session;
            session.setIdleTimeout(IDLE);
            session.setMaxTextMessageSize(MAX_MESSAGE);
            session.setMaxBinaryMessageSize(MAX_MESSAGE);
            if (closed || finished.get()) {
                shutDown();
                return;
            }
            if (workerGone) {
                session.close(workerCode, workerReason, Callback.NOOP);
                return;
            }
            session.demand();
            worker.request(1);
        }

        // client → worker: the next frame of the client is read once this one is written to the worker

        @Override
        public void onWebSocketPartialText(String text, boolean last) {
            worker.sendText(text, last).whenComplete((w, failure) -> next(failure));
        }

        @Override
        public void onWebSocketPartialBinary(ByteBuffer payload, boolean last, Callback callback) {
            worker.sendBinary(payload, last).whenComplete((w, failure) -> {
                if (failure == null) {
                    callback.succeed();
                } else {
                    callback.fail(failure);
                }
                next(failure);
            });
        }

        @Override
        public void onWebSocketPing(ByteBuffer payload) {
            // the worker's runtime answers it; its pong comes back to the client as a pong (fromWorker.onPong)
            worker.sendPing(payload).whenComplete((w, failure) -> next(failure));
        }

        @Override
        public void onWebSocketPong(ByteBuffer payload) {
            worker.sendPong(payload).whenComplete((w, failure) -> next(failure));
        }

        private void next(Throwable failure) {
            Session s = client;
            if (failure != null) {
                LOG.debug("services: relaying to {} failed: {}", target, failure.toString());
                worker.abort();
                if (s != null && s.isOpen()) {
                    s.close(1011, "the service's deployment failed", Callback.NOOP);
                }
                return;
            }
            if (s != null) {
                s.demand();
            }
        }

        @Override
        public void onWebSocketClose(int status, String reason) {
            // the client closed (or Jetty did: idle, protocol error): the worker gets the same close; it has a while to
            // answer it, then its connection is dropped
            WebSocket w = worker;
            if (w != null && !w.isOutputClosed()) {
                int code = status == 1005 || status == 1006 || status == 1015 ? WebSocket.NORMAL_CLOSURE : status;
                String why = reason == null ? "" : reason;
                CompletableFuture<WebSocket> sent;
                try {
                    sent = w.sendClose(code, why);
                } catch (IllegalArgumentException notForAClient) {
                    sent = w.sendClose(WebSocket.NORMAL_CLOSURE, why);
                }
                if (status == 1006) {
                    w.abort();
                } else {
                    sent.whenComplete((x, failure) -> CompletableFuture.delayedExecutor(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS).execute(w::abort));
                }
            }
            finish();
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            LOG.debug("services: a WebSocket to {} failed on the client's side: {}", target, cause.toString());
            WebSocket w = worker;
            if (w != null) {
                w.abort();
            }
            finish();
        }

        private void finish() {
            if (finished.compareAndSet(false, true)) {
                open.remove(this);
            }
        }

        void shutDown() {
            Session s = client;
            if (s != null && s.isOpen()) {
                s.close(1012, "the server is restarting this service", Callback.NOOP);
            }
            WebSocket w = worker;
            if (w != null) {
                w.abort();
            }
            finish();
        }

        /** worker → client: the next message part of the worker is asked for once this one is written to the client. */
        private final class FromWorker implements WebSocket.Listener {
            @Override
            public void onOpen(WebSocket webSocket) {
                // nothing is read from the worker until the client's WebSocket is open (onWebSocketOpen)
            }

            @Override
            public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                CompletableFuture<Void> written = new CompletableFuture<>();
                client.sendPartialText(data.toString(), last, written(webSocket, written));
                return written;
            }

            @Override
            public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
                // the JDK reuses the buffer once the returned stage completes: only after Jetty wrote it
                CompletableFuture<Void> written = new CompletableFuture<>();
                client.sendPartialBinary(data, last, written(webSocket, written));
                return written;
            }

            @Override
            public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
                // the JDK's client answers the worker's ping itself; the worker's runtime sends none of its own
                webSocket.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
                CompletableFuture<Void> written = new CompletableFuture<>();
                client.sendPong(message, written(webSocket, written));
                return written;
            }

            private Callback written(WebSocket webSocket, CompletableFuture<Void> written) {
                return Callback.from(() -> {
                    written.complete(null);
                    webSocket.request(1);
                }, failure -> {
                    written.completeExceptionally(failure);
                    webSocket.abort();
                });
            }

            @Override
            public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
                // the worker closed: the client gets its code and reason; the JDK answers the worker's close after this
                if (statusCode != 1005 && statusCode != 1006 && statusCode != 1015) {
                    workerCode = statusCode;
                    workerReason = reason;
                } else {
                    workerCode = 1000;
                    workerReason = null;
                }
                workerGone = true;
                Session s = client;
                if (s == null || !s.isOpen()) {
                    // not open yet: onWebSocketOpen sees workerGone and closes it
                    return null;
                }
                CompletableFuture<Void> closedToClient = new CompletableFuture<>();
                Callback done = Callback.from(() -> closedToClient.complete(null), failure -> closedToClient.complete(null));
                s.close(workerCode, workerReason, done);
                return closedToClient;
            }

            @Override
            public void onError(WebSocket webSocket, Throwable error) {
                // the worker's connection broke (its deployment stopped, its process went away)
                LOG.debug("services: the WebSocket to {} failed: {}", target, error.toString());
                workerGone = true;
                Session s = client;
                if (s != null && s.isOpen()) {
                    s.close(1001, "the service's deployment went away", Callback.NOOP);
                }
            }
        }
    }
}
