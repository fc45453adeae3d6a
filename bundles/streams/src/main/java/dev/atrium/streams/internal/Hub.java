package dev.atrium.streams.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.streams.api.Feed;
import dev.atrium.streams.api.HubOptions;
import dev.atrium.streams.api.StreamHub;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.servlet.AsyncContext;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServerContainer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A capability's live streams on this instance. An event is a row with a dense position in its stream; its
 * transaction announces {@code key:position} with {@code pg_notify}, the kernel's listening connection hears it, and
 * every subscriber gets its stream's events from the table, in order, without gaps or duplicates, whichever instance
 * committed them. Those committed here go to local subscribers from memory.
 * <p>
 * Writing an event to a thousand subscribers is a thousand socket writes: subscribers are split over lanes (one
 * thread each) so that one event's writes use every processor, and events that reach a lane while it still writes
 * earlier ones go to each subscriber in one write (a lane that fell behind catches up in one pass, not one per event).
 */
final class Hub<E> implements StreamHub<E> {

    private static final Logger LOG = LoggerFactory.getLogger(Hub.class);
    static final int BACKLOG_PAGE = 500;
    static final int FANOUT_PAGE = 10_000;

    private final Feed<E> feed;
    private final HubOptions options;
    private final Frames<E> frames;
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Per stream with subscribers here: the last event committed here and handed to them from memory. */
    private final Map<String, Long> deliveredHere = new ConcurrentHashMap<>();
    /** Per stream, how far the events heard and not yet fanned out go (0: unknown, read all). */
    private final Map<String, Long> heard = new ConcurrentHashMap<>();

    private final AtomicBoolean fanOutQueued = new AtomicBoolean();
    /** Reads the events a notification announced (one query for all of a stream's subscribers), then hands them to the lanes. */
    private final ExecutorService fanout;

    private final List<Lane> lanes;
    private final AtomicInteger nextLane = new AtomicInteger();
    private final ScheduledExecutorService timer;
    private final DatabaseChannels.Subscription listened;
    /** The open connections, ended when the hub closes. */
    private final Set<SseStream<E>> sseStreams = ConcurrentHashMap.newKeySet();

    private final Set<WebSocketStream<E>> webSockets = ConcurrentHashMap.newKeySet();
    private final java.util.function.Consumer<Hub<E>> onClose;
    private volatile boolean closed;

    Hub(
            Feed<E> feed,
            HubOptions options,
            DatabaseChannels databaseChannels,
            java.util.function.Consumer<Hub<E>> onClose) {
        this.feed = feed;
        this.onClose = onClose;
        this.options = options;
        this.frames = new Frames<>(feed);
        String prefix = "atrium-" + options.name();
        this.fanout = Executors.newSingleThreadExecutor(NamedThreads.factory(prefix + "-fanout"));
        List<Lane> made = new ArrayList<>();
        for (int i = 0; i < options.lanes(); i++) {
            made.add(new Lane(i, prefix + "-lane-" + i));
        }
        this.lanes = List.copyOf(made);
        this.timer = NamedThreads.scheduler(prefix + "-heartbeat");
        this.listened = databaseChannels.listen(options.channel(), new DatabaseChannels.Listener() {
            @Override
            public void listening() {
                // anything missed while no one listened: catch every stream up
                channels.keySet().forEach(key -> heard.put(key, 0L));
                queueFanOut();
            }

            @Override
            public void notified(String payload) {
                heard(payload);
            }
        });
        NamedThreads.repeat(
                timer,
                this::heartbeats,
                Duration.ofMillis(options.heartbeatMillis()),
                Duration.ofMillis(options.heartbeatMillis()));
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        onClose.accept(this);
        listened.close();
        timer.shutdownNow();
        fanout.shutdownNow();
        for (Lane lane : lanes) {
            lane.thread.shutdownNow();
        }
        sseStreams.forEach(SseStream::end);
        sseStreams.clear();
        webSockets.forEach(WebSocketStream::goingAway);
        webSockets.clear();
        for (Channel channel : channels.values()) {
            for (Sub s : channel.all()) {
                s.close(false);
            }
        }
        channels.clear();
        deliveredHere.clear();
    }

    @Override
    public void serveSse(HttpServletRequest request, HttpServletResponse response, String key, long after) {
        refuseWhenClosed();
        org.eclipse.jetty.server.Response connection = Exchanges.connectionOf(response);
        response.setStatus(200);
        response.setContentType("text/event-stream;charset=UTF-8");
        response.setHeader("Cache-Control", "no-cache, no-store");
        response.setHeader("X-Accel-Buffering", "no");
        AsyncContext async = request.startAsync(request, response);
        async.setTimeout(0);
        SseStream<E> stream = new SseStream<>(
                async,
                new JettyOutput(connection),
                frames,
                options.maxQueuedBytes(),
                sink -> subscribe(key, after, sink),
                sseStreams::remove);
        sseStreams.add(stream);
        async.addListener(stream);
        stream.start();
        if (closed) {
            stream.end(); // closed while it opened: it would wait for nothing
        }
    }

    @Override
    public void serveWebSocket(HttpServletRequest request, HttpServletResponse response, String key, long after)
            throws IOException {
        refuseWhenClosed();
        if (!"websocket".equalsIgnoreCase(request.getHeader("Upgrade"))) {
            throw new ApiException(426, "UPGRADE_REQUIRED", "this route is a WebSocket: send Upgrade: websocket");
        }
        // Jetty upgrades the container's own exchange; the 101 goes out on it, past the kernel's error capture
        jakarta.servlet.http.HttpServletRequest jreq = Exchanges.jakartaRequest(request);
        jakarta.servlet.http.HttpServletResponse jres = Exchanges.jakartaResponse(response);
        ServletContextHandler handler = ServletContextHandler.getCurrentServletContextHandler();
        JettyWebSocketServerContainer container =
                handler == null ? null : JettyWebSocketServerContainer.getContainer(handler.getServletContext());
        if (container == null) {
            throw new ApiException(503, "SERVICE_UNAVAILABLE", "WebSocket support is not enabled on this server");
        }
        boolean upgraded = container.upgrade(
                (upgradeRequest, upgradeResponse) -> new WebSocketStream<>(
                        feed,
                        options.maxPendingMessages(),
                        ws -> subscribe(key, after, ws),
                        ws -> {
                            webSockets.add(ws);
                            if (closed) {
                                ws.goingAway();
                            }
                        },
                        webSockets::remove),
                jreq,
                jres);
        if (!upgraded && !response.isCommitted()) {
            throw ApiException.badRequest("not a valid WebSocket handshake");
        }
    }

    private void refuseWhenClosed() {
        if (closed) {
            throw new ApiException(503, "SERVICE_UNAVAILABLE", options.name() + " streams are restarting");
        }
    }

    /**
     * Subscribes to a stream after {@code after}: the backlog first, then live events, each exactly once and in
     * order; the sink is closed after the terminal event, or after the backlog of a stream that has ended.
     */
    Sub subscribe(String key, long after, Sink<E> sink) {
        Sub s = new Sub(key, after, sink, Math.floorMod(nextLane.getAndIncrement(), lanes.size()));
        channels.compute(key, (k, v) -> {
            Channel channel = v == null ? new Channel(lanes.size()) : v;
            channel.byLane[s.lane].add(s);
            return channel;
        });
        if (closed) {
            s.close(false);
            return s;
        }
        deliverBacklog(s);
        if (!s.closed && feed.ended(key)) {
            // ended before (or while) we looked: whatever is left, then the end of the stream
            deliverBacklog(s);
            s.close(true);
        }
        return s;
    }

    /** The backlog in bounded pages, never the whole history in memory at once. */
    private void deliverBacklog(Sub s) {
        while (!s.closed) {
            long before = s.last;
            List<E> page = feed.after(s.key, before, BACKLOG_PAGE);
            s.deliver(page);
            if (page.size() < BACKLOG_PAGE || s.last == before) {
                return;
            }
        }
    }

    @Override
    public int subscribers() {
        return channels.values().stream().mapToInt(c -> c.all().size()).sum();
    }

    @Override
    public void committed(E event) {
        String key = feed.key(event);
        long position = feed.position(event);
        // the mark only while the stream has subscribers here (atomically with the last one leaving)
        if (channels.computeIfPresent(key, (k, channel) -> {
                    deliveredHere.merge(k, position, Math::max);
                    return channel;
                })
                != null) {
            deliver(key, List.of(event));
        }
    }

    private void heartbeats() {
        for (Channel channel : channels.values()) {
            for (Sub s : channel.all()) {
                try {
                    if (!s.sink.heartbeat()) {
                        s.close(false);
                    }
                } catch (RuntimeException e) {
                    s.close(false);
                }
            }
        }
    }

    /** A notification {@code key:position}: merged with those not yet fanned out, which one task on the fanout thread takes. */
    private void heard(String payload) {
        int colon = payload.lastIndexOf(':');
        long position;
        try {
            position = colon > 0 ? Long.parseLong(payload.substring(colon + 1)) : 0;
        } catch (NumberFormatException e) {
            position = 0;
        }
        String key = colon > 0 ? payload.substring(0, colon) : payload;
        if (channels.containsKey(key)) {
            heard.merge(key, position, (a, b) -> a == 0 || b == 0 ? 0 : Math.max(a, b));
            queueFanOut();
        }
    }

    private void queueFanOut() {
        if (fanOutQueued.compareAndSet(false, true)) {
            try {
                fanout.execute(this::fanOutHeard);
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    }

    private void fanOutHeard() {
        fanOutQueued.set(false);
        for (String key : List.copyOf(heard.keySet())) {
            Long upTo = heard.remove(key);
            if (upTo != null && channels.containsKey(key)) {
                try {
                    fanOut(key, upTo);
                } catch (RuntimeException e) {
                    LOG.warn("reading the {} stream {} failed", options.name(), key, e);
                }
            }
        }
    }

    /**
     * A notification said the stream has events up to {@code upTo} (0: unknown). Subscribers that already have them
     * (committed here and delivered from memory) cost no query.
     */
    private void fanOut(String key, long upTo) {
        Channel channel = channels.get(key);
        if (channel == null || channel.isEmpty() || (upTo > 0 && upTo <= deliveredHere.getOrDefault(key, 0L))) {
            return;
        }
        long from = channel.all().stream().mapToLong(s -> s.last).min().orElse(0);
        // every page up to the announced event (or to the end when none was named), so nothing waits for a next one
        while (upTo <= 0 || from < upTo) {
            List<E> page = feed.after(key, from, FANOUT_PAGE);
            deliver(key, page);
            if (page.size() < FANOUT_PAGE) {
                return;
            }
            from = feed.position(page.get(page.size() - 1));
        }
    }

    /** Hands events to every lane; each writes them to its share of the stream's subscribers. */
    private void deliver(String key, List<E> events) {
        Channel channel = channels.get(key);
        if (channel == null || events.isEmpty()) {
            return;
        }
        for (Lane lane : lanes) {
            List<Sub> subs = channel.byLane[lane.index];
            if (subs.isEmpty()) {
                continue; // one who subscribes now reads these from the table
            }
            try {
                lane.add(key, subs, events);
            } catch (RejectedExecutionException e) {
                return; // closing
            }
        }
    }

    /** One client's place in a stream: the last position it was sent. */
    final class Sub implements Subscription {
        final String key;
        final Sink<E> sink;
        /** The lane that writes to this subscriber: always the same one, so its events stay in order. */
        final int lane;

        volatile long last;
        volatile boolean closed;

        Sub(String key, long after, Sink<E> sink, int lane) {
            this.key = key;
            this.last = after;
            this.sink = sink;
            this.lane = lane;
        }

        synchronized void deliver(List<E> events) {
            if (events.size() == 1) {
                deliverEach(events);
                return;
            }
            sink.hold();
            try {
                deliverEach(events);
            } finally {
                sink.release();
            }
        }

        private void deliverEach(List<E> events) {
            for (int i = 0, n = events.size(); i < n; i++) { // no iterator: this runs once per subscriber per event
                E e = events.get(i);
                if (closed) {
                    return;
                }
                long position = feed.position(e);
                if (position <= last) {
                    continue;
                }
                // a gap (a notification raced the backlog): fill it from the table, in order, a page at a time
                for (long before = -1; !closed && position > last + 1 && last != before; ) {
                    before = last;
                    deliver(feed.after(key, last, (int) Math.min(BACKLOG_PAGE, position - last - 1)));
                }
                if (closed || position <= last) {
                    continue;
                }
                if (!sink.send(e)) {
                    close(false);
                    return;
                }
                last = position;
                if (feed.terminal(e)) {
                    close(true);
                    return;
                }
            }
        }

        @Override
        public void close() {
            close(false);
        }

        void close(boolean terminal) {
            if (closed) {
                return;
            }
            closed = true;
            // atomically with subscribe(): a channel emptied here is never one a new subscription was just added to
            channels.computeIfPresent(key, (k, v) -> {
                v.byLane[lane].remove(this);
                if (v.isEmpty()) {
                    deliveredHere.remove(key);
                    return null;
                }
                return v;
            });
            try {
                sink.close(terminal);
            } catch (RuntimeException e) {
                LOG.debug("closing a subscriber of {}", key, e);
            }
        }
    }

    /** A stream's subscribers here, by the lane that writes to them: a lane goes over its own only. */
    private final class Channel {
        final List<Sub>[] byLane;

        @SuppressWarnings("unchecked")
        Channel(int lanes) {
            byLane = new List[lanes];
            for (int i = 0; i < lanes; i++) {
                byLane[i] = new CopyOnWriteArrayList<>();
            }
        }

        boolean isEmpty() {
            for (List<Sub> subs : byLane) {
                if (!subs.isEmpty()) {
                    return false;
                }
            }
            return true;
        }

        /** A snapshot of all of them. */
        List<Sub> all() {
            List<Sub> all = new ArrayList<>();
            for (List<Sub> subs : byLane) {
                all.addAll(subs);
            }
            return all;
        }
    }

    /** One fan-out thread and the events waiting for it. */
    private final class Lane implements Runnable {
        final ExecutorService thread;
        final int index;
        private List<Batch> waiting = new ArrayList<>();
        private boolean scheduled;

        Lane(int index, String name) {
            this.index = index;
            this.thread = Executors.newSingleThreadExecutor(NamedThreads.factory(name));
        }

        void add(String key, List<Sub> subs, List<E> events) {
            synchronized (this) {
                waiting.add(new Batch(key, subs, events));
                if (scheduled) {
                    return;
                }
                scheduled = true;
            }
            thread.execute(this);
        }

        @Override
        public void run() {
            List<Batch> batches;
            synchronized (this) {
                batches = waiting;
                waiting = new ArrayList<>();
                scheduled = false;
            }
            for (int i = 0; i < batches.size(); ) {
                Batch b = batches.get(i);
                List<E> events = b.events;
                int next = i + 1;
                // a stream's consecutive batches are one (its subscribers skip what they have and fill gaps in order)
                for (; next < batches.size() && batches.get(next).subs == b.subs; next++) {
                    if (events == b.events) {
                        events = new ArrayList<>(events);
                    }
                    events.addAll(batches.get(next).events);
                }
                for (Sub s : b.subs) { // a CopyOnWriteArrayList: its iterator is the snapshot these events go to
                    try {
                        s.deliver(events);
                    } catch (RuntimeException e) {
                        LOG.warn("delivering events of {} failed", b.key, e);
                        s.close(false);
                    }
                }
                i = next;
            }
        }
    }

    /** Events for a lane's share of a stream's subscribers. */
    private final class Batch {
        final String key;
        final List<Sub> subs;
        final List<E> events;

        Batch(String key, List<Sub> subs, List<E> events) {
            this.key = key;
            this.subs = subs;
            this.events = events;
        }
    }
}
