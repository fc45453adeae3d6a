package dev.atrium.services.routing.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServerContainer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.common.WebSocketSession;
import org.eclipse.jetty.websocket.core.CloseStatus;
import org.eclipse.jetty.websocket.core.CoreSession;
import org.eclipse.jetty.websocket.core.Frame;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.OpCode;
import org.eclipse.jetty.websocket.core.WebSocketComponents;
import org.eclipse.jetty.websocket.core.client.CoreClientUpgradeRequest;
import org.eclipse.jetty.websocket.core.client.UpgradeListener;
import org.eclipse.jetty.websocket.core.client.WebSocketCoreClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSockets to a service's deployment through Host routing: the client's WebSocket ends in Jetty's server container
 * and a second one, Jetty's core WebSocket client, goes to the worker; every frame is relayed as it comes (text and
 * binary fragments, ping and pong, close with its code and reason). The handshake to the worker is made first, with
 * the client's Host, headers and subprotocols: the worker's choice of subprotocol (and the cookies of its 101) is what
 * the client gets, and a worker that refuses (any answer but 101) refuses the client with that answer (its body up to
 * {@link #MAX_REFUSAL} bytes). Neither direction buffers: a frame is read from one side only once the previous one was
 * written to the other (Jetty's {@code demand()} on both sides), so a slow reader slows its sender through TCP, never
 * the heap. The client's threads are a small pool of this object's own; nothing blocks on them.
 * Public, as its {@link Relay} is: Jetty builds method handles for the endpoint's callbacks.
 *
 * <p>Why one class of about 650 lines: the two halves of a relay (the client's endpoint and the worker's) must see each
 * other's demand and close; they are nested classes of one relay.
 */
public final class WorkerWebSockets implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WorkerWebSockets.class);
    /** How long the worker may take to answer the handshake. */
    static final Duration HANDSHAKE = Duration.ofSeconds(10);
    /** A relayed WebSocket with no frame either way for this long is closed (as Upstream's socket timeout). */
    static final Duration IDLE = Duration.ofMinutes(5);
    /** Cloudflare's limit for a WebSocket message to a worker. */
    static final long MAX_MESSAGE = 32L << 20;
    /** The most of a refusal's body that is passed on; a larger one is a 502 (it is held in memory whole). */
    static final int MAX_REFUSAL = 1 << 20;

    private final QueuedThreadPool threads;
    private final HttpClient http;
    private final WebSocketCoreClient client;
    private final Set<Relay> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Set by {@link #drain}: the client stops once the last relay ends. */
    private volatile boolean draining;

    private final AtomicBoolean stopped = new AtomicBoolean();

    WorkerWebSockets() throws Exception {
        // the client's selector and callbacks: short, never blocking; a fixed pool, so open WebSockets cost no threads
        this.threads = new QueuedThreadPool(8, 2, 30_000);
        threads.setName("atrium-worker-ws");
        threads.setDaemon(true);
        this.http = new HttpClient();
        http.setExecutor(threads);
        http.setConnectTimeout(5_000);
        http.setFollowRedirects(false);
        http.setUserAgentField(null); // the client's own User-Agent, if any, is passed on
        this.client = new WebSocketCoreClient(http, new WebSocketComponents());
        client.setClassLoader(WorkerWebSockets.class.getClassLoader());
        try {
            client.start();
        } catch (Exception | LinkageError e) {
            stop();
            throw e;
        }
    }

    /** Whether the request asks to become a WebSocket (RFC 6455 4.1): a GET with {@code Upgrade: websocket}. */
    static boolean isUpgrade(HttpServletRequest request) {
        if (!"GET".equals(request.getMethod())) {
            return false;
        }
        for (Enumeration<String> values = request.getHeaders("Upgrade"); values.hasMoreElements(); ) {
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

    /** What the worker answered to the handshake: its status and headers, and a refusal's body (at most MAX_REFUSAL). */
    private static final class Answer implements UpgradeListener {
        private final List<String> headers;
        volatile Response response;
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        volatile boolean tooLarge;

        Answer(List<String> headers) {
            this.headers = headers;
        }

        @Override
        public void onHandshakeRequest(Request request) {
            request.headers(h -> {
                // what the core client set itself (Upgrade, Connection, Sec-WebSocket-*) stays; Host and the rest are
                // the client's
                for (int i = 0; i + 1 < headers.size(); i += 2) {
                    if (headers.get(i).equalsIgnoreCase("host")) {
                        h.put(headers.get(i), headers.get(i + 1)); // in place of the worker's address
                    } else {
                        h.add(headers.get(i), headers.get(i + 1));
                    }
                }
            });
            request.onResponseContent((response, chunk) -> {
                if (response.getStatus() == 101) {
                    return;
                }
                synchronized (body) {
                    if (body.size() + chunk.remaining() > MAX_REFUSAL) {
                        tooLarge = true;
                        var unused = response.abort(
                                new IOException("the refusal's body is larger than " + MAX_REFUSAL + " bytes"));
                        return;
                    }
                    byte[] b = new byte[chunk.remaining()];
                    chunk.get(b);
                    body.write(b, 0, b.length);
                }
            });
        }

        @Override
        public void onHandshakeResponse(Request request, Response response) {
            this.response = response;
        }
    }

    /**
     * Relays the client's WebSocket to {@code target} ({@code ws://} on the deployment's endpoint): the handshake to the
     * worker first, then the client's upgrade with the worker's subprotocol. {@code rawRequest}/{@code rawResponse} are
     * the ones the filter was given (Felix's javax wrappers of the container's own exchange, which Jetty upgrades).
     */
    void relay(
            URI target,
            HttpServletRequest request,
            HttpServletResponse response,
            ServletRequest rawRequest,
            ServletResponse rawResponse,
            Upstream.Forwarded fwd)
            throws IOException {
        if (closed) {
            ServiceRouter.error(
                    response, 503, "SERVICE_UNAVAILABLE", "the server is restarting this service; try again");
            return;
        }
        String key = request.getHeader("Sec-WebSocket-Key");
        if (key == null || key.isBlank()) {
            ServiceRouter.error(response, 400, "BAD_REQUEST", "a WebSocket handshake needs Sec-WebSocket-Key");
            return;
        }
        if (!"13".equals(request.getHeader("Sec-WebSocket-Version"))) {
            response.setHeader("Sec-WebSocket-Version", "13");
            ServiceRouter.error(response, 426, "UPGRADE_REQUIRED", "only WebSocket version 13 is spoken");
            return;
        }
        ServletContextHandler handler = ServletContextHandler.getCurrentServletContextHandler();
        JettyWebSocketServerContainer container =
                handler == null ? null : JettyWebSocketServerContainer.getContainer(handler.getServletContext());
        if (container == null) {
            ServiceRouter.error(response, 501, "NOT_IMPLEMENTED", "WebSocket support is not enabled on this server");
            return;
        }

        Relay relay = new Relay(target);
        List<String> headers = new ArrayList<>();
        for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements(); ) {
            String name = names.nextElement();
            if (!passed(name, fwd)) {
                continue;
            }
            for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements(); ) {
                String v = values.nextElement();
                if (v.indexOf('\r') < 0 && v.indexOf('\n') < 0) {
                    headers.add(name);
                    headers.add(v);
                }
            }
        }
        headers.addAll(List.of("x-forwarded-for", fwd.forwardedFor(), "x-forwarded-proto", fwd.proto()));
        if (fwd.host() != null) {
            headers.addAll(List.of("x-forwarded-host", fwd.host()));
        }
        Answer answer = new Answer(headers);
        CoreClientUpgradeRequest upgrade = CoreClientUpgradeRequest.from(client, target, relay.fromWorker);
        upgrade.setSubProtocols(protocols(request));
        upgrade.addListener(answer);
        upgrade.timeout(HANDSHAKE.toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<CoreSession> handshake = client.connect(upgrade);
        CoreSession worker;
        try {
            worker = handshake.get(HANDSHAKE.toMillis() + 1_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Response refusal = answer.response;
            if (refusal != null && refusal.getStatus() != 101 && !answer.tooLarge) {
                refusal(refusal, answer, response);
            } else {
                LOG.debug("services: the WebSocket handshake to {} failed: {}", target, String.valueOf(e.getCause()));
                ServiceRouter.error(
                        response,
                        502,
                        "BAD_GATEWAY",
                        answer.tooLarge
                                ? "the service's deployment refused the WebSocket with too large an answer"
                                : "the service's deployment did not answer the WebSocket handshake");
            }
            return;
        } catch (TimeoutException e) {
            var unused = handshake.thenAccept(CoreSession::abort);
            handshake.cancel(true);
            ServiceRouter.error(
                    response,
                    504,
                    "GATEWAY_TIMEOUT",
                    "the service's deployment did not answer the WebSocket handshake in time");
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            var unused = handshake.thenAccept(CoreSession::abort);
            return;
        }
        relay.worker = worker;
        worker.setIdleTimeout(IDLE);
        String chosen = worker.getNegotiatedSubProtocol();
        Response accepted = answer.response;
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
            upgraded = container.upgrade(
                    (upgradeRequest, upgradeResponse) -> {
                        if (chosen != null && !chosen.isEmpty()) {
                            upgradeResponse.setAcceptedSubProtocol(chosen);
                        }
                        if (accepted != null) {
                            // the worker's own headers on its 101 (cookies, say); the handshake's are each hop's own
                            for (HttpField f : accepted.getHeaders()) {
                                String n = f.getName().toLowerCase(Locale.ROOT);
                                if (!Upstream.hop(n)
                                        && !n.startsWith("sec-websocket-")
                                        && !n.equals("date")
                                        && !n.equals("server")) {
                                    upgradeResponse.addHeader(f.getName(), f.getValue());
                                }
                            }
                        }
                        return relay;
                    },
                    jreq,
                    jres);
        } catch (IOException | RuntimeException e) {
            relay.shutDown();
            throw e;
        }
        if (!upgraded) {
            relay.shutDown();
            if (!response.isCommitted()) {
                ServiceRouter.error(response, 400, "BAD_REQUEST", "not a valid WebSocket handshake");
            }
        }
    }

    /** The client's subprotocols, in its order of preference. */
    private static List<String> protocols(HttpServletRequest request) {
        List<String> out = new ArrayList<>();
        for (Enumeration<String> values = request.getHeaders("Sec-WebSocket-Protocol"); values.hasMoreElements(); ) {
            for (String p : values.nextElement().split(",")) {
                String t = p.trim();
                if (!t.isEmpty() && !out.contains(t)) {
                    out.add(t);
                }
            }
        }
        return out;
    }

    /** The client's headers that go on to the worker, Host too: not the handshake's own (each hop makes its own), nor ours. */
    private static boolean passed(String name, Upstream.Forwarded fwd) {
        String n = name.toLowerCase(Locale.ROOT);
        return !(Upstream.hop(n)
                || n.startsWith("sec-websocket-")
                || n.equals("x-forwarded-for")
                || n.equals("x-forwarded-proto")
                || n.equals("x-forwarded-host")
                || n.equalsIgnoreCase(fwd.dropped()));
    }

    /** The worker's refusal, passed to the client as it was answered (status, headers, body). */
    private static void refusal(Response refusal, Answer answer, HttpServletResponse response) throws IOException {
        response.setStatus(refusal.getStatus());
        for (HttpField f : refusal.getHeaders()) {
            if (!Upstream.hop(f.getName())) {
                response.addHeader(f.getName(), f.getValue());
            }
        }
        byte[] bytes;
        synchronized (answer.body) {
            bytes = answer.body.toByteArray();
        }
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
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

    /** Closes every relayed WebSocket (1012: clients reconnect) and stops the client: this capability stops for good. */
    @Override
    public void close() {
        closed = true;
        for (Relay r : open) {
            r.shutDown();
        }
        open.clear();
        if (stopped.compareAndSet(false, true)) {
            stop();
        }
    }

    /**
     * Takes no new WebSocket, and lets the relayed ones run to their end (the workers keep running through a restart
     * of this capability, and the new revision relays the new ones); the client stops after the last. An open relay
     * keeps this revision's classes loaded until then.
     */
    void drain() {
        closed = true;
        draining = true;
        if (!open.isEmpty()) {
            LOG.info("services: {} WebSockets to services stay open through the restart", open.size());
        }
        stopWhenDrained();
    }

    private void stopWhenDrained() {
        if (draining && open.isEmpty() && stopped.compareAndSet(false, true)) {
            // not on a thread of the pool being stopped
            Thread t = new Thread(this::stop, "atrium-worker-ws-drained");
            t.setDaemon(true);
            t.start();
        }
    }

    private void stop() {
        for (org.eclipse.jetty.util.component.LifeCycle l : List.of(client, http, threads)) {
            try {
                l.stop();
            } catch (Exception e) {
                LOG.debug("services: stopping the worker WebSocket client", e);
            }
        }
    }

    private static org.eclipse.jetty.util.Callback callback(
            Runnable success, java.util.function.Consumer<Throwable> failure) {
        return org.eclipse.jetty.util.Callback.from(success, failure);
    }

    /**
     * One client's WebSocket and the worker's: Jetty's endpoint toward the client, {@link #fromWorker} toward the
     * worker. Each direction has at most one frame in flight; the next is asked for when it was written.
     */
    public final class Relay implements Session.Listener {
        private final URI target;
        volatile CoreSession worker;
        private volatile Session client;
        /** The client's WebSocket below Jetty's API: the worker's frames go to it as they are (no decoding of text). */
        private volatile CoreSession clientFrames;

        private final AtomicBoolean finished = new AtomicBoolean();
        /** Client → worker: a message's first fragment went, the next ones are continuations. */
        private volatile boolean toWorkerInMessage;
        /** The worker closed, or its connection failed, maybe before the client's WebSocket was open: with this code. */
        private volatile boolean workerGone;

        private volatile int workerCode = 1001;
        private volatile String workerReason = "the service's deployment went away";
        final FrameHandler fromWorker = new FromWorker();

        Relay(URI target) {
            this.target = target;
        }

        @Override
        public void onWebSocketOpen(Session session) {
            client = session;
            clientFrames = ((WebSocketSession) session).getCoreSession();
            session.setIdleTimeout(IDLE);
            session.setMaxTextMessageSize(MAX_MESSAGE);
            session.setMaxBinaryMessageSize(MAX_MESSAGE);
            if (closed || finished.get()) {
                shutDown();
                return;
            }
            if (workerGone) {
                closeClient(workerCode, workerReason, org.eclipse.jetty.util.Callback.NOOP);
                return;
            }
            session.demand();
            worker.demand();
        }

        // client → worker: the next frame of the client is read once this one is written to the worker

        @Override
        public void onWebSocketPartialText(String text, boolean last) {
            toWorker(OpCode.TEXT, last, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), null);
        }

        @Override
        public void onWebSocketPartialBinary(ByteBuffer payload, boolean last, Callback callback) {
            toWorker(OpCode.BINARY, last, payload, callback);
        }

        private void toWorker(byte opcode, boolean last, ByteBuffer payload, Callback release) {
            byte op = toWorkerInMessage ? OpCode.CONTINUATION : opcode;
            toWorkerInMessage = !last;
            worker.sendFrame(
                    new Frame(op, last, payload),
                    callback(
                            () -> {
                                if (release != null) {
                                    release.succeed();
                                }
                                next(null);
                            },
                            failure -> {
                                if (release != null) {
                                    release.fail(failure);
                                }
                                next(failure);
                            }),
                    false);
        }

        @Override
        public void onWebSocketPing(ByteBuffer payload) {
            // not answered here: the worker's runtime answers it, and its pong comes back to the client
            worker.sendFrame(new Frame(OpCode.PING, payload), callback(() -> next(null), this::next), false);
        }

        @Override
        public void onWebSocketPong(ByteBuffer payload) {
            worker.sendFrame(new Frame(OpCode.PONG, payload), callback(() -> next(null), this::next), false);
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
            CoreSession w = worker;
            if (w != null && w.isOutputOpen()) {
                if (status == 1006) {
                    w.abort();
                } else {
                    if (status == 1005) {
                        w.close(org.eclipse.jetty.util.Callback.NOOP); // a close without a code, as the client's
                    } else {
                        w.close(status == 1015 ? 1001 : status, reason, org.eclipse.jetty.util.Callback.NOOP);
                    }
                    http.getScheduler()
                            .schedule(
                                    () -> {
                                        if (!w.isClosed()) {
                                            w.abort();
                                        }
                                    },
                                    5,
                                    TimeUnit.SECONDS);
                }
            }
            finish();
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            LOG.debug("services: a WebSocket to {} failed on the client's side: {}", target, cause.toString());
            CoreSession w = worker;
            if (w != null) {
                w.abort();
            }
            finish();
        }

        private void finish() {
            if (finished.compareAndSet(false, true)) {
                open.remove(this);
                stopWhenDrained();
            }
        }

        void shutDown() {
            Session s = client;
            if (s != null && s.isOpen()) {
                s.close(1012, "the server is restarting this service", Callback.NOOP);
            }
            CoreSession w = worker;
            if (w != null) {
                w.abort();
            }
            finish();
        }

        /** The worker's close code to the client: none as none, an abnormal end (no close frame) as "going away". */
        private void closeClient(int code, String reason, org.eclipse.jetty.util.Callback done) {
            CoreSession c = clientFrames;
            if (c == null || !c.isOutputOpen()) {
                done.succeeded();
            } else if (code == 1005) {
                c.close(done);
            } else if (code == 1006 || code == 1015) {
                c.close(1001, "the service's deployment went away", done);
            } else {
                c.close(code, reason, done);
            }
        }

        /** worker → client: the worker's next frame is asked for once this one is written to the client. */
        private final class FromWorker implements FrameHandler {
            @Override
            public void onOpen(CoreSession session, org.eclipse.jetty.util.Callback callback) {
                worker = session;
                // nothing is read from the worker until the client's WebSocket is open (onWebSocketOpen)
                callback.succeeded();
            }

            @Override
            public void onFrame(Frame frame, org.eclipse.jetty.util.Callback callback) {
                if (frame.getOpCode() == OpCode.CLOSE) {
                    // the worker closed: the client gets its code and reason; the worker gets its answer after this
                    CloseStatus status = new CloseStatus(frame.getPayload());
                    workerCode = status.getCode();
                    workerReason = status.getReason();
                    workerGone = true;
                    closeClient(workerCode, workerReason, callback);
                    return;
                }
                CoreSession c = clientFrames;
                // the payload is the worker's until the callback: it is released once the client's copy is written
                c.sendFrame(
                        new Frame(frame.getOpCode(), frame.isFin(), frame.getPayload()),
                        callback(
                                () -> {
                                    callback.succeeded();
                                    worker.demand();
                                },
                                failure -> {
                                    callback.failed(failure);
                                    worker.abort();
                                }),
                        false);
            }

            @Override
            public void onError(Throwable cause, org.eclipse.jetty.util.Callback callback) {
                // the worker's connection broke (its deployment stopped, its process went away)
                LOG.debug("services: the WebSocket to {} failed: {}", target, cause.toString());
                workerGone = true;
                closeClient(1001, "the service's deployment went away", org.eclipse.jetty.util.Callback.NOOP);
                callback.succeeded();
            }

            @Override
            public void onClosed(CloseStatus status, org.eclipse.jetty.util.Callback callback) {
                // the worker's side is closed, with or without a close frame: the client's is too
                if (!workerGone) {
                    workerCode = status.getCode(); // no close frame came: 1006, which the client gets as 1001
                    workerReason = status.getReason();
                    workerGone = true;
                }
                closeClient(workerCode, workerReason, org.eclipse.jetty.util.Callback.NOOP);
                callback.succeeded();
            }
        }
    }
}
