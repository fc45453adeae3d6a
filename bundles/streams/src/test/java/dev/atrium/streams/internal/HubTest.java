package dev.atrium.streams.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.kernel.internal.db.DatabaseListener;
import dev.atrium.streams.api.Feed;
import dev.atrium.streams.api.HubOptions;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two hubs on one real PostgreSQL, each with the kernel's own listening connection, as two server instances: what a
 * subscriber of one gets of the events the other commits.
 */
class HubTest {

    private static final String CHANNEL = "atrium_hub_test";

    record Event(String key, long position, String body) {}

    private TestPostgres db;
    private final List<DatabaseListener> listeners = new ArrayList<>();
    private final List<Hub<Event>> hubs = new ArrayList<>();

    /** The events table: a stream's positions are dense, and its transaction announces {@code key:position}. */
    private final Feed<Event> feed = new Feed<>() {
        @Override
        public List<Event> after(String key, long position, int limit) {
            try (Connection c = db.dataSource().getConnection();
                    PreparedStatement st = c.prepareStatement(
                            "SELECT key, position, body FROM events WHERE key = ? AND position > ? ORDER BY position LIMIT ?")) {
                st.setString(1, key);
                st.setLong(2, position);
                st.setInt(3, limit);
                List<Event> page = new ArrayList<>();
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        page.add(new Event(rs.getString(1), rs.getLong(2), rs.getString(3)));
                    }
                }
                return page;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public String key(Event e) {
            return e.key();
        }

        @Override
        public long position(Event e) {
            return e.position();
        }

        @Override
        public String type(Event e) {
            return "test";
        }

        @Override
        public String json(Event e) {
            return "{\"body\":\"" + e.body() + "\"}";
        }

        @Override
        public boolean terminal(Event e) {
            return e.body().equals("end");
        }

        @Override
        public boolean ended(String key) {
            return after(key, 0, Integer.MAX_VALUE).stream().anyMatch(this::terminal);
        }
    };

    /** What a subscriber received, and how it ended. */
    static final class Received implements Sink<Event> {
        final List<Long> positions = new CopyOnWriteArrayList<>();
        volatile Boolean closedTerminal;
        volatile int refuseAfter = Integer.MAX_VALUE;

        @Override
        public boolean send(Event event) {
            if (positions.size() >= refuseAfter) {
                return false;
            }
            positions.add(event.position());
            return true;
        }

        @Override
        public boolean heartbeat() {
            return true;
        }

        @Override
        public void close(boolean terminal) {
            closedTerminal = terminal;
        }
    }

    @BeforeEach
    void start() throws Exception {
        db = TestPostgres.create("atrium_streams");
        try (Connection c = db.dataSource().getConnection();
                var st = c.createStatement()) {
            st.execute(
                    "CREATE TABLE events (key text NOT NULL, position bigint NOT NULL, body text NOT NULL, PRIMARY KEY (key, position))");
        }
    }

    @AfterEach
    void stop() throws Exception {
        hubs.forEach(Hub::close);
        for (DatabaseListener l : listeners) {
            Method deactivate = DatabaseListener.class.getDeclaredMethod("deactivate");
            deactivate.setAccessible(true);
            deactivate.invoke(l);
        }
        db.close();
    }

    private Hub<Event> instance(int lanes) {
        DatabaseListener listener = new DatabaseListener(db.dataSource());
        listeners.add(listener);
        Hub<Event> hub = new Hub<>(feed, HubOptions.of("test", CHANNEL).withLanes(lanes), listener, h -> {});
        hubs.add(hub);
        return hub;
    }

    /** Commits the next event of {@code key} and announces it, as a capability's store does; returns it. */
    private Event append(String key, String body) throws SQLException {
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement st = c.prepareStatement(
                    "INSERT INTO events SELECT ?, COALESCE(MAX(position), 0) + 1, ? FROM events WHERE key = ? "
                            + "RETURNING position, pg_notify(?, key || ':' || position)")) {
                // one writer per stream at a time: positions stay dense in commit order
                try (var lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
                    lock.setString(1, key);
                    lock.execute();
                }
                st.setString(1, key);
                st.setString(2, body);
                st.setString(3, key);
                st.setString(4, CHANNEL);
                try (ResultSet rs = st.executeQuery()) {
                    rs.next();
                    long position = rs.getLong(1);
                    c.commit();
                    return new Event(key, position, body);
                }
            }
        }
    }

    private static void await(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "within 20 s: " + what);
            Thread.sleep(10);
        }
    }

    private static List<Long> oneTo(long n) {
        List<Long> all = new ArrayList<>();
        for (long i = 1; i <= n; i++) {
            all.add(i);
        }
        return all;
    }

    @Test
    void aSubscriberGetsTheBacklogThenWhatEitherInstanceCommitsInOrderAndOnce() throws Exception {
        Hub<Event> here = instance(3);
        Hub<Event> there = instance(2);
        for (int i = 0; i < 5; i++) {
            append("s1", "old" + i);
        }
        List<Received> subscribers = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Received r = new Received();
            here.subscribe("s1", i % 2 == 0 ? 0 : 3, r);
            subscribers.add(r);
        }
        append("s2", "another stream");
        for (int i = 0; i < 300; i++) {
            Event e = append("s1", "live" + i);
            // every third one committed here (delivered from memory), the rest by the other instance
            (i % 3 == 0 ? here : there).committed(e);
        }
        for (int i = 0; i < subscribers.size(); i++) {
            Received r = subscribers.get(i);
            List<Long> expected = oneTo(305).subList(i % 2 == 0 ? 0 : 3, 305);
            await(() -> r.positions.size() >= expected.size(), "every event reaches subscriber " + r);
            assertEquals(expected, r.positions, "in order, none twice, none missed");
        }
        assertEquals(40, here.subscribers());
    }

    @Test
    void aTerminalEventEndsItsStreamAndAStreamThatEndedClosesAfterItsBacklog() throws Exception {
        Hub<Event> hub = instance(2);
        Received live = new Received();
        hub.subscribe("run", 0, live);
        append("run", "a");
        hub.committed(append("run", "end"));
        await(() -> live.closedTerminal != null, "the stream ends after its terminal event");
        assertTrue(live.closedTerminal);
        assertEquals(List.of(1L, 2L), live.positions);

        Received late = new Received();
        hub.subscribe("run", 1, late);
        assertEquals(List.of(2L), late.positions, "the rest of the backlog");
        assertEquals(Boolean.TRUE, late.closedTerminal);
        assertEquals(0, hub.subscribers());
    }

    @Test
    void aSubscriberThatRefusesIsDroppedAndTheOthersGoOn() throws Exception {
        Hub<Event> hub = instance(1);
        Received slow = new Received();
        slow.refuseAfter = 2;
        Received fine = new Received();
        hub.subscribe("p", 0, slow);
        hub.subscribe("p", 0, fine);
        for (int i = 0; i < 5; i++) {
            hub.committed(append("p", "n" + i));
        }
        await(() -> fine.positions.size() == 5, "the others get everything");
        assertEquals(List.of(1L, 2L), slow.positions);
        assertEquals(Boolean.FALSE, slow.closedTerminal, "dropped, not ended: it resumes from position 2");
        assertEquals(1, hub.subscribers());
    }

    @Test
    void aClosedHubEndsItsSubscribersAndRefusesNewStreams() throws Exception {
        Hub<Event> hub = instance(2);
        Received r = new Received();
        hub.subscribe("p", 0, r);
        hub.close();
        assertEquals(Boolean.FALSE, r.closedTerminal);
        assertEquals(0, hub.subscribers());
        ApiException e = assertThrows(ApiException.class, () -> hub.serveSse(null, null, "p", 0));
        assertEquals(503, e.status());
        Received after = new Received();
        hub.subscribe("p", 0, after);
        assertEquals(Boolean.FALSE, after.closedTerminal, "a subscription racing the close ends at once");
        await(
                () -> Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(t -> t.isAlive() && t.getName().startsWith("atrium-test-")),
                "no lane, fan-out or heartbeat thread outlives the hub");
    }
}
