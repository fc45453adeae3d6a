package dev.atrium.streams.internal;

import dev.atrium.streams.api.Feed;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket client: one text message (the event's JSON) per event, pings as heartbeats; closed with 1000 after
 * the stream's terminal event, 1001 when it is dropped, 1012 when the hub closes (clients reconnect to the new
 * version). Public: Jetty's container makes its endpoint metadata from the class.
 */
public final class WebSocketStream<E> implements Session.Listener.AutoDemanding, Sink<E> {
    private static final Logger LOG = LoggerFactory.getLogger(WebSocketStream.class);
    private static final byte[] PING = "hb".getBytes(StandardCharsets.US_ASCII);

    private final Feed<E> feed;
    private final int maxPending;
    private final Function<WebSocketStream<E>, Subscription> subscribe;
    private final Consumer<WebSocketStream<E>> opened;
    private final Consumer<WebSocketStream<E>> ended;
    private final AtomicInteger pending = new AtomicInteger();
    private volatile Session session;
    private volatile Subscription subscription;
    private volatile boolean failed;

    WebSocketStream(
            Feed<E> feed,
            int maxPending,
            Function<WebSocketStream<E>, Subscription> subscribe,
            Consumer<WebSocketStream<E>> opened,
            Consumer<WebSocketStream<E>> ended) {
        this.feed = feed;
        this.maxPending = maxPending;
        this.subscribe = subscribe;
        this.opened = opened;
        this.ended = ended;
    }

    @Override
    public void onWebSocketOpen(Session s) {
        session = s;
        opened.accept(this);
        subscription = subscribe.apply(this);
    }

    /** The hub closes. */
    void goingAway() {
        close(1012, "the server is restarting this service");
    }

    @Override
    public boolean send(E event) {
        return await(c -> session.sendText(feed.json(event), c));
    }

    @Override
    public boolean heartbeat() {
        return await(c -> session.sendPing(ByteBuffer.wrap(PING), c));
    }

    @Override
    public void close(boolean terminal) {
        close(terminal ? 1000 : 1001, terminal ? "the stream has ended" : "going away");
    }

    private void close(int status, String reason) {
        Session s = session;
        try {
            if (s != null && s.isOpen()) {
                s.close(status, reason, Callback.NOOP);
            }
        } catch (RuntimeException e) {
            LOG.debug("closing a WebSocket stream", e);
        }
    }

    /**
     * Never blocks the fan-out thread: the message is queued with Jetty and its outcome arrives later. A client with
     * {@code maxPending} messages still unsent is too slow: it is dropped (and resumes with Last-Event-ID); a message
     * that fails ends the subscription, and no later one is sent after it.
     */
    private boolean await(Consumer<Callback> send) {
        Session s = session;
        if (s == null || !s.isOpen() || failed) {
            return false;
        }
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            failed = true;
            return false;
        }
        send.accept(Callback.from(pending::decrementAndGet, error -> {
            pending.decrementAndGet();
            failed = true;
            Subscription sub = subscription;
            if (sub != null) {
                sub.close();
            }
        }));
        return !failed;
    }

    @Override
    public void onWebSocketClose(int status, String reason) {
        ended.accept(this);
        Subscription sub = subscription;
        if (sub != null) {
            sub.close();
        }
    }

    @Override
    public void onWebSocketError(Throwable cause) {
        onWebSocketClose(1011, String.valueOf(cause));
    }
}
