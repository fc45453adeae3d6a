package dev.atrium.runs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.Sql;
import dev.atrium.runs.internal.RunStore.Event;

/**
 * This instance's link to the others through PostgreSQL. The kernel's listening connection ({@link DatabaseChannels})
 * hears the run channels; one dedicated connection here holds a session advisory lock named after this instance (its
 * liveness: a dead process's lock is gone, so its orphaned {@code running} runs can be failed at once). Run events
 * reach local subscribers (SSE, WebSocket) from the table, in id order, without gaps or duplicates, whichever instance
 * appended them.
 */
@Component(service = EventHub.class)
public class EventHub {

    /** How often the liveness connection is asked whether it still holds (a lost one loses the lock with it). */
    private static final long LIVENESS_CHECK_MILLIS = 1_000;

    private static final Logger LOG = LoggerFactory.getLogger(EventHub.class);
    private static final int LOCK_CLASS = 0x41545231; // "ATR1"
    static final int BACKLOG_PAGE = 500;
    static final int FANOUT_PAGE = 10_000;
    static final long REAP_MILLIS = 5_000;
    static final long DEAD_AFTER_MILLIS = 4_000;

    /** Where a subscription's events go. Implementations must not block for long. */
    interface Sink {
        /** Sends one event; false when the client is gone. */
        boolean send(Event event);

        /** Sends a keep-alive; false when the client is gone. */
        boolean heartbeat();

        void close(boolean terminal);

        /** Events follow at once: until {@link #release}, the sink may keep them for one write. Calls nest. */
        default void hold() {
        }

        default void release() {
        }
    }

    final class Subscription {
        final String runId;
        final Sink sink;
        /** The fan-out lane that writes to this subscriber: always the same one, so its events stay in order. */
        final int lane;
        private volatile long last;
        private volatile boolean closed;

        Subscription(String runId, long after, Sink sink, int lane) {
            this.runId = runId;
            this.last = after;
            this.sink = sink;
            this.lane = lane;
        }

        long last() {
            return last;
        }

        synchronized void deliver(List<Event> events) {
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

        private void deliverEach(List<Event> events) {
            for (int i = 0, n = events.size(); i < n; i++) { // no iterator: this runs once per subscriber per event
                Event e = events.get(i);
                if (closed) {
                    return;
                }
                if (e.id() <= last) {
                    continue;
                }
                // a gap (a notification raced the backlog): fill it from the table, in order, a page at a time
                for (long before = -1; !closed && e.id() > last + 1 && last != before;) {
                    before = last;
                    deliver(store.events(runId, last, (int) Math.min(BACKLOG_PAGE, e.id() - last - 1)));
                }
                if (closed || e.id() <= last) {
                    continue;
                }
                if (!sink.send(e)) {
                    close(false);
                    return;
                }
                last = e.id();
                if (e.terminal()) {
                    close(true);
                    return;
                }
            }
        }

        void close(boolean terminal) {
            if (closed) {
                return;
            }
            closed = true;
            // atomically with subscribe(): a list emptied here is never one a new subscription was just added to
            channels.computeIfPresent(runId, (k, v) -> {
                v.byLane[lane].remove(this);
                if (v.isEmpty()) {
                    deliveredHere.remove(runId);
                    return null;
                }
                return v;
            });
            try {
                sink.close(terminal);
            } catch (RuntimeException e) {
                LOG.debug("closing a subscriber of {}", runId, e);
            }
        }

        boolean closed() {
            return closed;
        }
    }

    final String instanceId = "inst_" + UUID.randomUUID().toString().replace("-", "");
    private final RunStore store;
    private final DataSource dataSource;
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Per run with subscribers here: the last event this instance appended and handed to them from memory. */
    private final Map<String, Long> deliveredHere = new ConcurrentHashMap<>();
    private final List<Runnable> queueListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<String>> cancelListeners = new CopyOnWriteArrayList<>();
    /** Reads events a notification announced (one query for all of a run's subscribers), then hands them to the lanes. */
    private final ExecutorService fanout = Executors.newSingleThreadExecutor(r -> new Thread(r, "atrium-runs-fanout"));
    /**
     * Write one event to a run's subscribers in parallel, each lane to its share: a thousand subscribers are a
     * thousand socket writes, and one thread doing them all kept the last subscriber waiting for the others.
     */
    private final Lane[] lanes;
    private final java.util.concurrent.atomic.AtomicInteger nextLane = new java.util.concurrent.atomic.AtomicInteger();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "atrium-runs-heartbeat"));
    /** Holds the liveness lock and reaps the runs of dead instances. */
    private final Thread liveness;
    private final List<DatabaseChannels.Subscription> listened;
    /** Per run, how far the events heard and not yet fanned out go (0: unknown, read all). */
    private final Map<String, Long> heard = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicBoolean fanOutQueued = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean running = true;
    private volatile boolean connected;
    private final Consumer<Event> committedHere = this::committedHere;
    private final Liveness dead = new Liveness(TimeUnit.MILLISECONDS.toNanos(DEAD_AFTER_MILLIS));

    @Activate
    public EventHub(@Reference RunStore store, @Reference DataSource dataSource, @Reference DatabaseChannels databaseChannels,
            @Reference RunsSettings settings) {
        this.store = store;
        this.dataSource = dataSource;
        this.lanes = new Lane[settings.fanoutThreads];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane(i);
        }
        store.onCommitted(committedHere);
        this.listened = List.of(databaseChannels.listen(RunStore.EVENTS_CHANNEL, new DatabaseChannels.Listener() {
            @Override
            public void listening() {
                // anything missed while no one listened: catch every channel up
                channels.keySet().forEach(runId -> heard.put(runId, 0L));
                queueFanOut();
            }

            @Override
            public void notified(String payload) {
                heard(payload);
            }
        }), databaseChannels.listen(RunStore.QUEUE_CHANNEL, new DatabaseChannels.Listener() {
            @Override
            public void listening() {
                queueListeners.forEach(Runnable::run);
            }

            @Override
            public void notified(String payload) {
                queueListeners.forEach(Runnable::run);
            }
        }), databaseChannels.listen(RunStore.CANCEL_CHANNEL, payload -> cancelListeners.forEach(l -> l.accept(payload))));
        this.liveness = new Thread(this::holdLiveness, "atrium-runs-liveness");
        liveness.setDaemon(true);
        liveness.start();
        timer.scheduleWithFixedDelay(this::heartbeats, settings.heartbeatMillis, settings.heartbeatMillis, TimeUnit.MILLISECONDS);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        store.removeCommitted(committedHere);
        listened.forEach(DatabaseChannels.Subscription::close);
        running = false;
        liveness.interrupt();
        liveness.join(5_000);
        timer.shutdownNow();
        fanout.shutdownNow();
        for (Lane lane : lanes) {
            lane.thread.shutdownNow();
        }
        for (Channel channel : channels.values()) {
            for (Subscription s : channel.all()) {
                s.close(false);
            }
        }
        channels.clear();
        deliveredHere.clear();
    }

    boolean connected() {
        return connected;
    }

    void onQueued(Runnable r) {
        queueListeners.add(r);
    }

    void onCancel(Consumer<String> c) {
        cancelListeners.add(c);
    }

    void removeListeners(Runnable queued, Consumer<String> cancel) {
        queueListeners.remove(queued);
        cancelListeners.remove(cancel);
    }

    /**
     * Subscribes to a run's events after {@code afterId}: the backlog first, then live events, each exactly once and
     * in order; the sink is closed after the terminal event.
     */
    Subscription subscribe(String runId, long afterId, Sink sink) {
        Subscription s = new Subscription(runId, afterId, sink, Math.floorMod(nextLane.getAndIncrement(), lanes.length));
        channels.compute(runId, (k, v) -> {
            Channel channel = v == null ? new Channel(lanes.length) : v;
            channel.byLane[s.lane].add(s);
            return channel;
        });
        deliverBacklog(s);
        if (!s.closed() && store.get(runId).map(RunStore.Run::terminal).orElse(true)) {
            // finished before (or while) we looked: whatever is left, then the end of the stream
            deliverBacklog(s);
            s.close(true);
        }
        return s;
    }

    /** The backlog in bounded pages, never the whole history in memory at once. */
    private void deliverBacklog(Subscription s) {
        while (!s.closed()) {
            long before = s.last();
            List<Event> page = store.events(s.runId, before, BACKLOG_PAGE);
            s.deliver(page);
            if (page.size() < BACKLOG_PAGE || s.last() == before) {
                return;
            }
        }
    }

    int subscribers() {
        return channels.values().stream().mapToInt(c -> c.all().size()).sum();
    }

    private void heartbeats() {
        for (Channel channel : channels.values()) {
            for (Subscription s : channel.all()) {
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

    /** An event appended by this instance has committed: its subscribers here get it now, from memory. */
    private void committedHere(Event event) {
        // the mark only while the run has subscribers here (atomically with the last one leaving)
        if (channels.computeIfPresent(event.runId(), (runId, channel) -> {
            deliveredHere.merge(runId, event.id(), Math::max);
            return channel;
        }) != null) {
            deliver(event.runId(), List.of(event));
        }
    }

    /**
     * A notification said the run has events up to {@code upTo} (0: unknown). Subscribers that already have them
     * (this instance appended them and delivered them from memory) cost no query.
     */
    private void fanOut(String runId, long upTo) {
        Channel channel = channels.get(runId);
        if (channel == null || channel.isEmpty() || upTo > 0 && upTo <= deliveredHere.getOrDefault(runId, 0L)) {
            // every subscriber here has those: from memory, or from the table if it subscribed later
            return;
        }
        long from = channel.all().stream().mapToLong(Subscription::last).min().orElse(0);
        // every page up to the announced event (or to the end when none was named), so nothing waits for a next one
        while (upTo <= 0 || from < upTo) {
            List<Event> page = store.events(runId, from, FANOUT_PAGE);
            deliver(runId, page);
            if (page.size() < FANOUT_PAGE) {
                return;
            }
            from = page.get(page.size() - 1).id();
        }
    }

    /** Hands events to every lane; each writes them to its share of the run's subscribers. */
    private void deliver(String runId, List<Event> events) {
        Channel channel = channels.get(runId);
        if (channel == null || events.isEmpty()) {
            return;
        }
        for (Lane lane : lanes) {
            List<Subscription> subs = channel.byLane[lane.index];
            if (subs.isEmpty()) {
                continue; // one who subscribes now reads these from the table
            }
            try {
                lane.add(runId, subs, events);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                return; // stopping
            }
        }
    }

    /** A run's subscribers here, by the lane that writes to them: a lane goes over its own only. */
    private static final class Channel {
        final List<Subscription>[] byLane;

        @SuppressWarnings("unchecked")
        Channel(int lanes) {
            byLane = new List[lanes];
            for (int i = 0; i < lanes; i++) {
                byLane[i] = new CopyOnWriteArrayList<>();
            }
        }

        boolean isEmpty() {
            for (List<Subscription> subs : byLane) {
                if (!subs.isEmpty()) {
                    return false;
                }
            }
            return true;
        }

        /** A snapshot of all of them. */
        List<Subscription> all() {
            List<Subscription> all = new ArrayList<>();
            for (List<Subscription> subs : byLane) {
                all.addAll(subs);
            }
            return all;
        }
    }

    /**
     * One fan-out thread and the events waiting for it. Events that arrive while the lane still writes earlier ones
     * go out together, each subscriber's in one write: a lane that fell behind (a burst from the model, a moment
     * without CPU) catches up in one pass over its subscribers, not one pass per event.
     */
    private static final class Lane implements Runnable {
        private record Batch(String runId, List<Subscription> subs, List<Event> events) {
        }

        final ExecutorService thread;
        final int index;
        private List<Batch> waiting = new ArrayList<>();
        private boolean scheduled;

        Lane(int index) {
            this.index = index;
            String name = "atrium-runs-fanout-" + index;
            this.thread = Executors.newSingleThreadExecutor(r -> new Thread(r, name));
        }

        void add(String runId, List<Subscription> subs, List<Event> events) {
            synchronized (this) {
                waiting.add(new Batch(runId, subs, events));
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
            for (int i = 0; i < batches.size();) {
                Batch b = batches.get(i);
                List<Event> events = b.events;
                int next = i + 1;
                // one run's consecutive batches are one (its subscribers skip what they have and fill gaps in order)
                for (; next < batches.size() && batches.get(next).subs == b.subs; next++) {
                    if (events == b.events) {
                        events = new ArrayList<>(b.events);
                    }
                    events.addAll(batches.get(next).events);
                }
                deliver(b.runId, b.subs, events);
                i = next;
            }
        }
    }

    private static void deliver(String runId, List<Subscription> subs, List<Event> events) {
        for (Subscription s : subs) { // a CopyOnWriteArrayList: its iterator is the snapshot this event goes to
            try {
                s.deliver(events);
            } catch (RuntimeException e) {
                LOG.warn("delivering events of {} failed", runId, e);
                s.close(false);
            }
        }
    }

    /**
     * Holds this instance's liveness lock on a connection of its own while the hub runs, and reaps the runs of instances
     * whose lock is free; a lost connection is replaced, and the lock taken again.
     */
    private void holdLiveness() {
        long lastReap = 0;
        while (running) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                Sql.exec(c, "SELECT pg_advisory_lock(?, hashtext(?))", LOCK_CLASS, instanceId);
                connected = true;
                try {
                    long lastCheck = System.currentTimeMillis();
                    while (running) {
                        Thread.sleep(100);
                        if (System.currentTimeMillis() - lastCheck >= LIVENESS_CHECK_MILLIS) {
                            lastCheck = System.currentTimeMillis();
                            if (!c.isValid(2)) {
                                throw new SQLException("the liveness connection was lost");
                            }
                        }
                        if (System.currentTimeMillis() - lastReap > REAP_MILLIS) {
                            lastReap = System.currentTimeMillis();
                            try {
                                reapOrphans(c);
                            } catch (SQLException | RuntimeException e) {
                                if (!c.isValid(2)) {
                                    throw e;
                                }
                                LOG.warn("reaping orphaned runs failed", e);
                            }
                        }
                    }
                } finally {
                    connected = false;
                    try (Statement st = c.createStatement()) {
                        st.execute("SELECT pg_advisory_unlock_all()");
                    } catch (SQLException ignored) {
                        // the connection is going away anyway
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (SQLException | RuntimeException e) {
                if (running) {
                    LOG.warn("the runs' liveness connection was lost; taking the lock again: {}", e.toString());
                    try {
                        Thread.sleep(1_000);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }

    /** A notification {@code runId:eventId}: merged with those not yet fanned out, which one task on the fanout thread takes. */
    private void heard(String payload) {
        int colon = payload.lastIndexOf(':');
        long id = 0;
        if (colon > 0) {
            try {
                id = Long.parseLong(payload.substring(colon + 1));
            } catch (NumberFormatException e) {
                id = 0;
            }
        }
        String runId = colon < 0 ? payload : payload.substring(0, colon);
        if (channels.containsKey(runId)) {
            heard.merge(runId, id, (a, b) -> a == 0 || b == 0 ? 0 : Math.max(a, b));
            queueFanOut();
        }
    }

    private void queueFanOut() {
        if (fanOutQueued.compareAndSet(false, true)) {
            try {
                fanout.execute(this::fanOutHeard);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // stopping
            }
        }
    }

    private void fanOutHeard() {
        fanOutQueued.set(false);
        for (String runId : List.copyOf(heard.keySet())) {
            Long upTo = heard.remove(runId);
            if (upTo != null && channels.containsKey(runId)) {
                fanOut(runId, upTo);
            }
        }
    }

    /**
     * A run is {@code running} on an instance that holds its advisory lock. When another instance's lock can be
     * taken, that process is gone: its running runs fail with a reason instead of staying running for ever.
     */
    private void reapOrphans(Connection c) throws SQLException {
        Set<String> free = new java.util.HashSet<>();
        for (String inst : store.runningInstances()) {
            if (inst.equals(instanceId)) {
                continue;
            }
            if (Sql.one(c, "SELECT pg_try_advisory_lock(?, hashtext(?))", rs -> rs.getBoolean(1), LOCK_CLASS, inst).orElse(false)) {
                free.add(inst);
                Sql.exec(c, "SELECT pg_advisory_unlock(?, hashtext(?))", LOCK_CLASS, inst);
            }
        }
        for (String inst : dead.dead(free, System.nanoTime())) {
            for (String runId : store.runningOn(inst)) {
                if (store.finish(runId, "failed", "the server process running this run stopped before it finished")) {
                    LOG.info("run {} of a stopped instance marked failed", runId);
                }
            }
        }
    }

    /**
     * Which instances are dead: those whose liveness lock was free on a reap and on every reap since, for at least
     * {@code deadAfterNanos}. A live instance that is reconnecting its listener holds its lock again within moments,
     * so one free look is never enough.
     */
    static final class Liveness {
        private final long deadAfterNanos;
        private final Map<String, Long> freeSince = new java.util.HashMap<>();

        Liveness(long deadAfterNanos) {
            this.deadAfterNanos = deadAfterNanos;
        }

        /** {@code free}: the instances whose lock could be taken now. Returns the dead ones (each once). */
        synchronized List<String> dead(Set<String> free, long now) {
            freeSince.keySet().retainAll(free);
            List<String> dead = new ArrayList<>();
            for (String inst : free) {
                Long since = freeSince.putIfAbsent(inst, now);
                if (since != null && now - since >= deadAfterNanos) {
                    dead.add(inst);
                    freeSince.remove(inst);
                }
            }
            return dead;
        }
    }
}
