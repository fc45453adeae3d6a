package dev.atrium.runs.internal;

import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.Sql;
import dev.atrium.runs.internal.RunStore.Event;
import dev.atrium.streams.api.EventStreams;
import dev.atrium.streams.api.Feed;
import dev.atrium.streams.api.HubOptions;
import dev.atrium.streams.api.StreamHub;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This instance's link to the others through PostgreSQL. Run events reach local subscribers (SSE, WebSocket) through
 * the platform's event streams ({@link #streams}), in id order, without gaps or duplicates, whichever instance appended
 * them. The kernel's listening connection also hears the queue and cancel channels; one dedicated connection here holds
 * a session advisory lock named after this instance (its liveness: a dead process's lock is gone, so its orphaned
 * {@code running} runs can be failed at once).
 */
@Component(service = EventHub.class)
public class EventHub {

    /** How often the liveness connection is asked whether it still holds (a lost one loses the lock with it). */
    private static final long LIVENESS_CHECK_MILLIS = 1_000;

    private static final Logger LOG = LoggerFactory.getLogger(EventHub.class);
    private static final int LOCK_CLASS = 0x41545231; // "ATR1"
    static final long REAP_MILLIS = 5_000;
    static final long DEAD_AFTER_MILLIS = 4_000;
    /** Bytes an SSE client may leave unread before it counts as too slow and is dropped (it resumes with Last-Event-ID). */
    static final int MAX_QUEUED_BYTES = 4 * 1024 * 1024;

    final String instanceId = "inst_" + UUID.randomUUID().toString().replace("-", "");
    private final RunStore store;
    private final DataSource dataSource;
    /** The runs' event streams: a run is a stream, an event's id its position. */
    final StreamHub<Event> streams;

    private final List<Runnable> queueListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<String>> cancelListeners = new CopyOnWriteArrayList<>();
    /** Holds the liveness lock and reaps the runs of dead instances. */
    private final Thread liveness;

    private final List<DatabaseChannels.Subscription> listened;
    private volatile boolean running = true;
    private volatile boolean connected;
    private final Consumer<Event> committedHere;
    private final Liveness dead = new Liveness(TimeUnit.MILLISECONDS.toNanos(DEAD_AFTER_MILLIS));

    @Activate
    public EventHub(
            @Reference RunStore store,
            @Reference DataSource dataSource,
            @Reference DatabaseChannels databaseChannels,
            @Reference EventStreams eventStreams,
            @Reference RunsSettings settings) {
        this.store = store;
        this.dataSource = dataSource;
        this.streams = eventStreams.open(
                new RunFeed(store),
                HubOptions.of("runs", RunStore.EVENTS_CHANNEL)
                        .withLanes(settings.fanoutThreads)
                        .withHeartbeatMillis(settings.heartbeatMillis)
                        .withMaxQueuedBytes(MAX_QUEUED_BYTES));
        this.committedHere = streams::committed;
        store.onCommitted(committedHere);
        this.listened = List.of(
                databaseChannels.listen(RunStore.QUEUE_CHANNEL, new DatabaseChannels.Listener() {
                    @Override
                    public void listening() {
                        queueListeners.forEach(Runnable::run);
                    }

                    @Override
                    public void notified(String payload) {
                        queueListeners.forEach(Runnable::run);
                    }
                }),
                databaseChannels.listen(
                        RunStore.CANCEL_CHANNEL, payload -> cancelListeners.forEach(l -> l.accept(payload))));
        this.liveness = new Thread(this::holdLiveness, "atrium-runs-liveness");
        liveness.setDaemon(true);
        liveness.start();
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        store.removeCommitted(committedHere);
        listened.forEach(DatabaseChannels.Subscription::close);
        streams.close();
        running = false;
        liveness.interrupt();
        liveness.join(5_000);
    }

    /** A run's events as a stream: it ends with the run's terminal event. */
    record RunFeed(RunStore store) implements Feed<Event> {
        @Override
        public List<Event> after(String runId, long position, int limit) {
            return store.events(runId, position, limit);
        }

        @Override
        public String key(Event e) {
            return e.runId();
        }

        @Override
        public long position(Event e) {
            return e.id();
        }

        @Override
        public String type(Event e) {
            return e.type();
        }

        @Override
        public String json(Event e) {
            return e.toJsonText();
        }

        @Override
        public boolean terminal(Event e) {
            return e.terminal();
        }

        @Override
        public boolean ended(String runId) {
            return store.get(runId).map(RunStore.Run::terminal).orElse(true);
        }
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
            if (Sql.one(c, "SELECT pg_try_advisory_lock(?, hashtext(?))", rs -> rs.getBoolean(1), LOCK_CLASS, inst)
                    .orElse(false)) {
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
