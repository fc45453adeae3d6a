package dev.atrium.kernel.internal.db;

import dev.atrium.kernel.api.DatabaseChannels;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one connection that LISTENs for every bundle. Each bundle kept its own before (the access cache, notifications,
 * runs, services), each with its own reconnect loop and each holding a pooled connection for good. One thread polls
 * here; subscriptions are added and removed between its waits, so no other thread ever touches the connection.
 */
@Component(service = {DatabaseChannels.class, DatabaseListener.class})
public class DatabaseListener implements DatabaseChannels {

    /** The connection's application_name, so an operator (or a test) can find its backend. */
    public static final String APPLICATION_NAME = "atrium-listener";
    /**
     * How long one wait for notifications lasts: a new subscription is listened to, and a stop noticed, only between
     * waits (a bundle's stop, and so the update gate's hold, waits for it). A wait that returns empty costs next to nothing.
     */
    static final int POLL_MILLIS = 100;
    /** The pause before connecting again after the connection was lost. */
    static final long RETRY_MILLIS = 500;

    private static final Pattern CHANNEL = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseListener.class);

    private final DataSource dataSource;
    private final List<Heard> subscriptions = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private final java.util.concurrent.atomic.LongAdder connectionsLost = new java.util.concurrent.atomic.LongAdder();

    @Activate
    public DatabaseListener(@Reference DataSource dataSource) {
        this.dataSource = dataSource;
        this.thread = new Thread(this::run, "atrium-database-listener");
        thread.setDaemon(true);
        thread.start();
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
        subscriptions.clear();
    }

    /** Times the listening connection was lost (and listened again) since the start. */
    public long reconnects() {
        return connectionsLost.sum();
    }

    /** Subscriptions open now. */
    public int subscriptions() {
        return subscriptions.size();
    }

    @Override
    public Subscription listen(String channel, Listener listener) {
        if (channel == null || !CHANNEL.matcher(channel).matches()) {
            throw new IllegalArgumentException("a channel is a lower-case PostgreSQL identifier, not " + channel);
        }
        Heard heard = new Heard(channel, listener);
        subscriptions.add(heard);
        return heard;
    }

    /** A subscription; its {@code hearing} is read and written on the listening thread only. */
    private final class Heard implements Subscription {
        final String channel;
        final Listener listener;
        boolean hearing;
        volatile boolean closed;

        Heard(String channel, Listener listener) {
            this.channel = channel;
            this.listener = listener;
        }

        @Override
        public void close() {
            closed = true;
            subscriptions.remove(this);
        }
    }

    private void run() {
        while (running) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                try (Statement st = c.createStatement()) {
                    st.execute("SET application_name = '" + APPLICATION_NAME + "'");
                }
                listenOn(c);
            } catch (SQLException | RuntimeException e) {
                if (running) {
                    connectionsLost.increment();
                }
                for (Heard h : subscriptions) {
                    if (h.hearing) {
                        h.hearing = false;
                        tell(h, () -> h.listener.deaf());
                    }
                }
                if (running) {
                    LOG.warn(
                            "the database listener lost its connection; listening again in {} ms: {}",
                            RETRY_MILLIS,
                            e.toString());
                    try {
                        Thread.sleep(RETRY_MILLIS);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }

    private void listenOn(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        Set<String> listened = new HashSet<>();
        try {
            while (running) {
                Set<String> wanted = new HashSet<>();
                for (Heard h : subscriptions) {
                    wanted.add(h.channel);
                }
                try (Statement st = c.createStatement()) {
                    for (String channel : wanted) {
                        if (listened.add(channel)) {
                            st.execute("LISTEN " + channel);
                        }
                    }
                    for (String channel : List.copyOf(listened)) {
                        if (!wanted.contains(channel)) {
                            st.execute("UNLISTEN " + channel);
                            listened.remove(channel);
                        }
                    }
                }
                for (Heard h : subscriptions) {
                    if (!h.hearing && !h.closed) {
                        h.hearing = true;
                        tell(h, () -> h.listener.listening());
                    }
                }
                PGNotification[] ns = pg.getNotifications(POLL_MILLIS);
                if (ns == null) {
                    continue;
                }
                for (PGNotification n : ns) {
                    String payload = n.getParameter() == null ? "" : n.getParameter();
                    for (Heard h : subscriptions) {
                        if (h.hearing && !h.closed && h.channel.equals(n.getName())) {
                            tell(h, () -> h.listener.notified(payload));
                        }
                    }
                }
            }
        } finally {
            try (Statement st = c.createStatement()) {
                st.execute("UNLISTEN *");
                st.execute("RESET application_name");
            } catch (SQLException ignored) {
                // the connection is going away anyway
            }
        }
    }

    /** One listener's failure is its own: the others, and the connection, go on. */
    private static void tell(Heard h, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.warn("a listener of channel {} failed", h.channel, e);
        }
    }
}
