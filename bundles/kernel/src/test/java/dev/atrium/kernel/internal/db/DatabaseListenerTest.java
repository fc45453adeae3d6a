package dev.atrium.kernel.internal.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The kernel's one listening connection, on the machine's PostgreSQL. */
class DatabaseListenerTest {

    private TestPostgres db;
    private DatabaseListener listener;

    @BeforeEach
    void start() throws Exception {
        db = TestPostgres.create("atrium_listener");
        listener = new DatabaseListener(db.dataSource());
    }

    @AfterEach
    void stop() throws Exception {
        listener.deactivate();
        db.close();
    }

    /** What a listener was told, in order: "listening", "deaf", or the payload. */
    private static final class Told implements DatabaseChannels.Listener {
        final BlockingQueue<String> told = new LinkedBlockingQueue<>();

        @Override
        public void notified(String payload) {
            told.add(payload);
        }

        @Override
        public void listening() {
            told.add("listening");
        }

        @Override
        public void deaf() {
            told.add("deaf");
        }

        String next() throws InterruptedException {
            String t = told.poll(10, TimeUnit.SECONDS);
            assertTrue(t != null, "nothing told within 10 s");
            return t;
        }
    }

    @Test
    void aListenerHearsItsChannelInOrderAfterItIsToldItListens() throws Exception {
        Told a = new Told();
        Told b = new Told();
        Told other = new Told();
        DatabaseChannels.Subscription sa = listener.listen("atrium_test", a);
        listener.listen("atrium_test", b);
        listener.listen("atrium_other", other);
        assertEquals("listening", a.next());
        assertEquals("listening", b.next());
        assertEquals("listening", other.next());
        notify("atrium_test", "one");
        notify("atrium_test", "two");
        notify("atrium_test", "");
        assertEquals(List.of("one", "two", ""), List.of(a.next(), a.next(), a.next()));
        assertEquals(List.of("one", "two", ""), List.of(b.next(), b.next(), b.next()));
        sa.close();
        sa.close();
        notify("atrium_test", "three");
        assertEquals("three", b.next());
        notify("atrium_other", "x");
        assertEquals("x", other.next());
        assertEquals(null, a.told.poll(300, TimeUnit.MILLISECONDS), "a closed subscription hears nothing");
        assertEquals(null, other.told.poll(0, TimeUnit.MILLISECONDS), "nor does another channel's");
    }

    @Test
    void aLostConnectionMakesListenersDeafThenListeningAgainAndOneFailingListenerHarmsNoOther() throws Exception {
        Told a = new Told();
        listener.listen("atrium_test", payload -> {
            throw new IllegalStateException("a listener's own bug");
        });
        listener.listen("atrium_test", a);
        assertEquals("listening", a.next());
        notify("atrium_test", "before");
        assertEquals("before", a.next());
        try (Connection c = db.dataSource().getConnection();
                Statement st = c.createStatement();
                ResultSet r = st.executeQuery(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE" + " application_name = '"
                                + DatabaseListener.APPLICATION_NAME + "' AND datname = current_database()")) {
            r.next();
            assertEquals(1, r.getInt(1), "one connection listens for every channel");
        }
        assertEquals("deaf", a.next());
        assertEquals(
                "listening", a.next(), "what was announced meanwhile may be lost: the listener is told to catch up");
        notify("atrium_test", "after");
        assertEquals("after", a.next());
    }

    @Test
    void aChannelIsALowerCaseIdentifier() {
        Told a = new Told();
        for (String bad : new String[] {"Upper", "a; DROP TABLE x", "", "1abc", "x".repeat(64)}) {
            assertThrows(IllegalArgumentException.class, () -> listener.listen(bad, a), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> listener.listen(null, a));
    }

    private void notify(String channel, String payload) throws Exception {
        try (Connection c = db.dataSource().getConnection();
                var ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, payload);
            ps.execute();
        }
    }
}
