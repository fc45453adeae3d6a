package dev.atrium.kernel.internal.edge;

import dev.atrium.kernel.api.RelayRouter;
import dev.atrium.kernel.internal.http.ErrorBody;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * One client connection of the kernel's listener while its requests are relayed (issue 34: the worker proxy). Each
 * request head that has arrived whole is read ({@link RelayHeads}) and offered to the {@link RelayRoutes}; a request one
 * takes is written to its upstream with the forwarded headers, its body passed as it comes, and the answer passed back
 * byte for byte until its framing ends, then the next request is read. All of it runs on the selector threads, the
 * listener's for the client and the upstream connector's for the upstream: nothing here blocks, and one request waits for
 * no other connection's. At the first request no router takes (or one whose head came in pieces, or any while the
 * server stops), the connection is handed to Jetty's HTTP/1.1 with the bytes read so far, for good: from there on it is
 * an ordinary connection of the servlet stack.
 *
 * <p>Client and upstream events arrive on different threads; every change of this connection's state is made holding
 * its monitor, and nothing slow runs while it is held (writes are non-blocking; their callbacks may run within them).
 *
 * <p>Why one class of about 640 lines: the client side, its upstream connection and the exchange between them are one
 * state machine under one monitor; split into classes, each would reach into the others' state for every step.
 */
final class RelayConnection extends AbstractConnection implements Connection.UpgradeFrom {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RelayConnection.class);
    private static final int BUFFER = 16 * 1024;

    private final Relay relay;
    private final Connector connector;
    private final String remote;
    /** The client's bytes not yet passed on, in flush mode. */
    private final ByteBuffer in = ByteBuffer.wrap(new byte[BUFFER]).limit(0);

    private boolean readArmed;
    private boolean clientEnded;
    private boolean handed;
    private boolean closed;
    /** For the header deadline: no request has been read yet. */
    volatile boolean awaitingFirstHead = true;

    private Exchange exchange;
    private Link link;

    RelayConnection(Relay relay, Connector connector, EndPoint endPoint) {
        super(endPoint, connector.getExecutor());
        this.relay = relay;
        this.connector = connector;
        SocketAddress address = endPoint.getRemoteSocketAddress();
        this.remote = address instanceof InetSocketAddress inet && inet.getAddress() != null
                ? inet.getAddress().getHostAddress()
                : "unknown";
    }

    /** One relayed request and its answer. */
    private static final class Exchange {
        final RelayHeads.Request head;
        final RelayRouter.Relay target;
        final byte[] headBytes;
        ServerStop.Flight flight;
        ByteBuffer headOut;
        long bodyLeft;
        /** How fast the body arrives, when it has one and the check is on. */
        BodyPace pace;

        RelayHeads.Chunks chunks;
        boolean bodyDone;
        boolean requestSent;
        boolean reused;
        boolean retried;
        RelayHeads.Response response;
        boolean responseStarted;
        long responseLeft;
        RelayHeads.Chunks responseChunks;
        volatile boolean stream;

        Exchange(RelayHeads.Request head, RelayRouter.Relay target, byte[] headBytes) {
            this.head = head;
            this.target = target;
            this.headBytes = headBytes;
        }
    }

    /** A connection to an upstream address: being made, then open. */
    private static final class Link {
        final InetSocketAddress address;
        Upstream connection;
        boolean dead;

        Link(InetSocketAddress address) {
            this.address = address;
        }

        void close() {
            dead = true;
            if (connection != null) {
                connection.getEndPoint().close();
            }
        }
    }

    @Override
    public InvocationType getInvocationType() {
        return InvocationType.NON_BLOCKING;
    }

    @Override
    public void onOpen() {
        super.onOpen();
        synchronized (this) {
            armClient();
        }
    }

    @Override
    public void onClose(Throwable cause) {
        synchronized (this) {
            closed = true;
            dropLink();
            Exchange x = exchange;
            exchange = null;
            if (x != null) {
                exit(x);
            }
        }
        super.onClose(cause);
    }

    @Override
    public boolean onIdleExpired(TimeoutException timeout) {
        synchronized (this) {
            Exchange x = exchange;
            if (x == null) {
                return true;
            }
            // a body that stopped arriving altogether is too slow by now; an answer under way is bounded by its
            // upstream's idle timeout, not the client's silence
            if (!x.bodyDone && x.pace != null && x.pace.tooSlow(System.nanoTime())) {
                tooSlow(x);
            }
            return false;
        }
    }

    @Override
    public ByteBuffer onUpgradeFrom() {
        synchronized (this) {
            return in.hasRemaining()
                    ? ByteBuffer.wrap(Arrays.copyOfRange(in.array(), in.position(), in.limit()))
                    : null;
        }
    }

    @Override
    public void onFillable() {
        synchronized (this) {
            readArmed = false;
            if (handed || closed) {
                return;
            }
            BufferUtil.compact(in);
            if (in.limit() == in.capacity()) {
                return; // full: read again once what is here has been passed on
            }
            int n;
            try {
                n = getEndPoint().fill(in);
            } catch (IOException e) {
                n = -1;
            }
            Exchange x = exchange;
            if (n < 0) {
                clientEnded = true;
                if (x == null) {
                    getEndPoint().close();
                } else if (!x.requestSent) {
                    getEndPoint().close(); // the request's body never came whole
                }
                return; // otherwise the answer is passed on, then the connection closes
            }
            if (x != null) {
                if (!x.requestSent && n > 0) {
                    if (x.pace != null) {
                        x.pace.stopWaiting(System.nanoTime());
                    }
                    send(x);
                } else if (n == 0) {
                    armClient();
                }
                return; // a next request waits for this one's answer
            }
            next();
        }
    }

    private void armClient() {
        if (!readArmed && !handed && !closed) {
            readArmed = true;
            fillInterested();
        }
    }

    /** Starts the next request from the bytes read, or waits for more. Holding the monitor, with no exchange. */
    private void next() {
        if (!in.hasRemaining()) {
            if (clientEnded) {
                getEndPoint().close();
            } else {
                armClient();
            }
            return;
        }
        byte[] a = in.array();
        int pos = in.position();
        int end = RelayHeads.headEnd(a, pos, Math.min(in.limit(), pos + RelayHeads.MAX_REQUEST_HEAD));
        if (end < 0) {
            handOver(); // a head in pieces or too long: Jetty's parser, header deadline and 431
            return;
        }
        RelayHeads.Request head = RelayHeads.request(a, pos, end);
        RelayRouter.Relay target = head == null ? null : relay.routes.route(head.host, head.method, head.target);
        if (target == null) {
            handOver();
            return;
        }
        Exchange x =
                new Exchange(head, target, head.forUpstream(a, target.pathPrefix(), target.droppedHeaders(), remote));
        x.flight = relay.flights.enter(() -> x.stream);
        if (x.flight == null) {
            handOver(); // the server stops: the edge answers 503
            return;
        }
        awaitingFirstHead = false;
        relay.routes.relayed.increment();
        in.position(end);
        x.headOut = ByteBuffer.wrap(x.headBytes);
        x.chunks = head.chunked ? new RelayHeads.Chunks() : null;
        x.bodyLeft = head.chunked ? 0 : Math.max(0, head.contentLength);
        x.bodyDone = !head.chunked && x.bodyLeft == 0;
        long min = relay.minBodyBytesPerSecond.getAsLong();
        if (!x.bodyDone && min > 0) {
            x.pace = new BodyPace(
                    min, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(relay.bodyRateGraceMillis.getAsLong()));
        }
        exchange = x;
        if (link != null && (link.dead || !link.address.equals(target.address()))) {
            dropLink();
        }
        x.reused = link != null;
        if (link == null) {
            connect(target.address());
        }
        send(x);
    }

    private void connect(InetSocketAddress address) {
        Link l = new Link(address);
        link = l;
        relay.connect(address, endPoint -> new Upstream(endPoint, l), new Promise<>() {
            @Override
            public void succeeded(Connection result) {
                // Upstream.onOpen has taken it
            }

            @Override
            public void failed(Throwable failure) {
                LOG.debug("relay: no connection to {}: {}", address, failure.toString());
                synchronized (RelayConnection.this) {
                    if (link == l) {
                        link = null;
                        l.dead = true;
                        upstreamEnded(l);
                    }
                }
            }
        });
    }

    /** Writes what of the request can go now: its head (once), and the body bytes read. */
    private void send(Exchange x) {
        Link l = link;
        if (l == null || l.connection == null) {
            return; // the upstream's opening sends it
        }
        ByteBuffer head = x.headOut;
        ByteBuffer body = BufferUtil.EMPTY_BUFFER;
        int pos = in.position();
        if (!x.bodyDone && in.hasRemaining()) {
            int stop;
            if (x.chunks != null) {
                int e = x.chunks.feed(in.array(), pos, in.limit());
                if (e == -2) {
                    getEndPoint().close(); // broken chunked framing: the request cannot be passed on
                    return;
                }
                stop = e < 0 ? in.limit() : e;
                x.bodyDone = e >= 0;
            } else {
                long k = Math.min(x.bodyLeft, in.remaining());
                x.bodyLeft -= k;
                stop = pos + (int) k;
                x.bodyDone = x.bodyLeft == 0;
            }
            body = ByteBuffer.wrap(in.array(), pos, stop - pos);
            if (x.pace != null) {
                x.pace.arrived(body.remaining(), System.nanoTime());
            }
        }
        if (head == null && !body.hasRemaining()) {
            if (!x.bodyDone) {
                awaitBody(x);
            }
            return;
        }
        x.headOut = null;
        int stop = body.limit();
        boolean sent = body.hasRemaining();
        Callback written = callback(() -> requestWritten(x, l, sent ? stop : -1), failure -> {
            synchronized (this) {
                if (link == l) {
                    dropLink();
                    upstreamEnded(l);
                }
            }
        });
        if (head == null) {
            l.connection.getEndPoint().write(written, body);
        } else {
            l.connection.getEndPoint().write(written, head, body);
        }
    }

    private void requestWritten(Exchange x, Link l, int consumedTo) {
        synchronized (this) {
            if (exchange != x || link != l || closed) {
                return;
            }
            if (consumedTo >= 0) {
                in.position(consumedTo);
            }
            if (x.bodyDone) {
                x.requestSent = true;
                if (!in.hasRemaining()) {
                    armClient(); // a closing client, or the next request, is seen while the answer comes
                }
                return;
            }
            if (in.hasRemaining()) {
                send(x);
            } else {
                awaitBody(x);
            }
        }
    }

    /**
     * Waits for more of the request's body from the client, unless what came so far came too slowly: then the client is
     * answered 408 and the connection closed, as the servlet path's {@link BodyRate} does.
     */
    private void awaitBody(Exchange x) {
        if (x.pace != null) {
            long now = System.nanoTime();
            if (x.pace.tooSlow(now)) {
                tooSlow(x);
                return;
            }
            x.pace.waiting(now);
        }
        armClient();
    }

    private void tooSlow(Exchange x) {
        String message = "the request body arrived slower than " + x.pace.minBytesPerSecond() + " bytes per second";
        LOG.debug("relay: {} {} from {}: {}", x.head.method, x.head.target, remote, message);
        if (x.responseStarted) {
            getEndPoint().close(); // the upstream answers already: the client can only see the connection end
            return;
        }
        ownAnswer(x, 408, "Request Timeout", "REQUEST_TIMEOUT", message);
    }

    /** The upstream's bytes, from its connection's selector thread. */
    private void upstreamBytes(Upstream up) {
        Exchange x = exchange;
        if (x == null || link == null || link.connection != up) {
            up.getEndPoint().close(); // an answer nobody asked for
            return;
        }
        byte[] a = up.buffer.array();
        int pos = up.buffer.position();
        int lim = up.buffer.limit();
        int bodyStart = pos;
        ByteBuffer headOut = null;
        if (x.response == null) {
            int end = RelayHeads.responseHeadEnd(a, pos, lim);
            if (end < 0) {
                if (lim - pos >= a.length) {
                    badGateway(x, "the service's deployment answered with too long a head");
                } else {
                    up.arm();
                }
                return;
            }
            RelayHeads.Response r = RelayHeads.response(a, pos, end, x.head.head);
            if (r == null || r.status == 101) {
                badGateway(x, "the service's deployment answered something that is not HTTP/1.1");
                return;
            }
            x.responseStarted = true;
            if (r.status < 200) {
                // 100 Continue, 103 Early Hints: passed on; the answer follows
                writeClient(up, end, false, head(r, a, pos, end));
                return;
            }
            x.response = r;
            x.stream = r.stream;
            x.responseLeft = r.contentLength;
            x.responseChunks = r.chunked ? new RelayHeads.Chunks() : null;
            bodyStart = end;
            if (r.rewritten != null) {
                headOut = ByteBuffer.wrap(r.rewritten);
                pos = end;
            }
        }
        RelayHeads.Response r = x.response;
        int stop;
        boolean complete;
        if (r.untilClose) {
            stop = lim;
            complete = false;
        } else if (x.responseChunks != null) {
            int e = x.responseChunks.feed(a, bodyStart, lim);
            if (e == -2) {
                getEndPoint().close(); // broken framing mid-answer: the client sees the connection end
                return;
            }
            stop = e < 0 ? lim : e;
            complete = e >= 0;
        } else {
            long k = Math.min(x.responseLeft, lim - bodyStart);
            x.responseLeft -= k;
            stop = bodyStart + (int) k;
            complete = x.responseLeft == 0;
        }
        ByteBuffer body = ByteBuffer.wrap(a, pos, stop - pos);
        if (headOut == null) {
            writeClient(up, stop, complete, body);
        } else {
            writeClient(up, stop, complete, headOut, body);
        }
    }

    /** A response head as the client is to get it: as it came, or rewritten to HTTP/1.1 with CRLF lines. */
    private static ByteBuffer head(RelayHeads.Response r, byte[] a, int pos, int end) {
        return r.rewritten != null ? ByteBuffer.wrap(r.rewritten) : ByteBuffer.wrap(a, pos, end - pos);
    }

    private void writeClient(Upstream up, int consumedTo, boolean complete, ByteBuffer... bytes) {
        Exchange x = exchange;
        getEndPoint()
                .write(
                        callback(
                                () -> responseWritten(x, up, consumedTo, complete),
                                failure -> getEndPoint().close()),
                        bytes);
    }

    private void responseWritten(Exchange x, Upstream up, int consumedTo, boolean complete) {
        synchronized (this) {
            if (exchange != x || closed) {
                return;
            }
            up.buffer.position(consumedTo);
            if (complete) {
                answered(x, up);
            } else if (up.buffer.hasRemaining()) {
                upstreamBytes(up);
            } else {
                up.arm();
            }
        }
    }

    /** The answer has passed: the exchange ends, and the next request is read (or the connection closes). */
    private void answered(Exchange x, Upstream up) {
        exchange = null;
        exit(x);
        x.target.answered().accept(x.response.status);
        if (x.response.close || up.buffer.hasRemaining()) {
            if (link != null && link.connection == up) {
                dropLink();
            }
        } else {
            up.arm();
        }
        if (!x.requestSent || x.head.close || x.response.untilClose) {
            getEndPoint().close();
            return;
        }
        next();
    }

    /** The upstream closed or failed, or could not be reached. */
    private void upstreamEnded(Link l) {
        Exchange x = exchange;
        if (x == null) {
            return; // an idle connection the upstream closed: the next request makes another
        }
        if (x.response != null && x.response.untilClose) {
            if (l.connection != null && !l.connection.buffer.hasRemaining()) {
                answered(x, l.connection);
            } else {
                getEndPoint().close();
            }
            return;
        }
        if (x.responseStarted) {
            getEndPoint().close(); // mid-answer: the client can only see the connection end
            return;
        }
        if (x.reused && !x.retried && x.chunks == null && x.head.contentLength <= 0) {
            // a kept connection the upstream had closed meanwhile: the request goes again on a new one
            x.retried = true;
            x.reused = false;
            x.headOut = ByteBuffer.wrap(x.headBytes);
            x.requestSent = false;
            connect(x.target.address());
            send(x);
            return;
        }
        badGateway(x, "the service's deployment did not answer");
    }

    /** Answers the client 502 with the spec's body; the connection stays only when the request was read whole. */
    private void badGateway(Exchange x, String message) {
        ownAnswer(x, 502, "Bad Gateway", "BAD_GATEWAY", message);
    }

    /**
     * Answers the client with the spec's body instead of the upstream, whose connection goes; the client's connection
     * stays only when the request was read whole.
     */
    private void ownAnswer(Exchange x, int status, String reason, String code, String message) {
        dropLink();
        boolean keep = x.bodyDone && !x.head.close && !clientEnded;
        if (!keep) {
            // what is left of the request's body is not read
            in.position(in.limit());
        }
        byte[] body = ErrorBody.json(code, message).getBytes(StandardCharsets.UTF_8);
        byte[] head = ("HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + (keep ? "" : "\r\nConnection: close") + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        x.responseStarted = true;
        getEndPoint()
                .write(
                        callback(
                                () -> {
                                    synchronized (this) {
                                        if (exchange != x || closed) {
                                            return;
                                        }
                                        exchange = null;
                                        exit(x);
                                        x.target.answered().accept(0);
                                        if (keep) {
                                            x.requestSent = true;
                                            next();
                                        } else {
                                            getEndPoint().close();
                                        }
                                    }
                                },
                                failure -> getEndPoint().close()),
                        ByteBuffer.wrap(head),
                        ByteBuffer.wrap(body));
    }

    /** Forgets the upstream connection, then closes it: its close, seen later, is no longer this exchange's. */
    private void dropLink() {
        Link l = link;
        link = null;
        if (l != null) {
            l.close();
        }
    }

    private void exit(Exchange x) {
        ServerStop.Flight f = x.flight;
        x.flight = null;
        if (f != null) {
            relay.flights.exit(f);
        }
    }

    /** Gives the connection to Jetty's HTTP/1.1 with the bytes read so far; it does not come back. */
    private void handOver() {
        handed = true;
        awaitingFirstHead = false;
        dropLink();
        relay.routes.handedOver.increment();
        getEndPoint().upgrade(relay.http.newConnection(connector, getEndPoint()));
    }

    private static Callback callback(Runnable success, java.util.function.Consumer<Throwable> failure) {
        return Callback.from(Invocable.InvocationType.NON_BLOCKING, success, failure);
    }

    /** The connection to the upstream; its events are handled holding the client connection's monitor. */
    private final class Upstream extends AbstractConnection {
        final ByteBuffer buffer = ByteBuffer.wrap(new byte[BUFFER]).limit(0);
        private final Link link;
        private boolean armed;

        Upstream(EndPoint endPoint, Link link) {
            super(endPoint, connector.getExecutor());
            this.link = link;
        }

        @Override
        public InvocationType getInvocationType() {
            return InvocationType.NON_BLOCKING;
        }

        @Override
        public void onOpen() {
            super.onOpen();
            synchronized (RelayConnection.this) {
                link.connection = this;
                if (RelayConnection.this.link != link || link.dead || closed) {
                    getEndPoint().close();
                    return;
                }
                arm();
                Exchange x = exchange;
                if (x != null && !x.requestSent) {
                    send(x);
                }
            }
        }

        @Override
        public void onClose(Throwable cause) {
            synchronized (RelayConnection.this) {
                if (RelayConnection.this.link == link) {
                    RelayConnection.this.link = null;
                    link.dead = true;
                    upstreamEnded(link);
                }
            }
            super.onClose(cause);
        }

        void arm() {
            if (!armed && !link.dead) {
                armed = true;
                fillInterested();
            }
        }

        @Override
        public void onFillable() {
            synchronized (RelayConnection.this) {
                armed = false;
                if (RelayConnection.this.link != link || closed) {
                    getEndPoint().close();
                    return;
                }
                BufferUtil.compact(buffer);
                int n;
                try {
                    n = buffer.limit() == buffer.capacity() ? 0 : getEndPoint().fill(buffer);
                } catch (IOException e) {
                    n = -1;
                }
                if (n < 0) {
                    getEndPoint().close(); // onClose tells the exchange
                    return;
                }
                if (n == 0 && !buffer.hasRemaining()) {
                    arm();
                    return;
                }
                upstreamBytes(this);
            }
        }
    }
}
