package dev.atrium.services.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.Ids;

/**
 * Tells the other instances on the same PostgreSQL that the services' desired state changed ({@code NOTIFY
 * atrium_services}), and makes this instance apply the stored state again when another one says so. A notification
 * names what changed: {@link #STATE} (deployments, env, domains…) or {@link #CERTIFICATES} (a certificate was issued, so
 * the HTTPS listener serves it). Each instance runs
 * every deployment on its own provider and keeps its own routing table, both derived from the rows: a deploy, rollback
 * or env change made through one instance reaches the others within a notification. While the listening connection is
 * lost, the set is applied again once it is back (changes may have been missed meanwhile).
 */
final class ChangeFeed implements AutoCloseable {

    /**
     * How long one wait for notifications lasts: the listener notices a stop only between waits, and a bundle's stop
     * or update (and so the update gate's hold) waits for it. A wait that returns empty costs next to nothing.
     */
    private static final int LISTEN_POLL_MILLIS = 100;

    private static final Logger LOG = LoggerFactory.getLogger(ChangeFeed.class);
    static final String CHANNEL = "atrium_services";
    static final String STATE = "state";
    static final String CERTIFICATES = "certificates";

    private final DataSource dataSource;
    /** Given the topic another instance announced, or null when notifications may have been missed (anything changed). */
    private final Consumer<String> onRemoteChange;
    private final String self = Ids.random("", 16);
    private final Thread listener;
    private volatile boolean running = true;

    ChangeFeed(DataSource dataSource, Consumer<String> onRemoteChange) {
        this.dataSource = dataSource;
        this.onRemoteChange = onRemoteChange;
        this.listener = new Thread(this::listen, "atrium-services-listener");
        listener.setDaemon(true);
        listener.start();
    }

    /** After a change this instance made and applied. */
    void announce() {
        announce(STATE);
    }

    /** After a change of {@code topic} this instance made. */
    void announce(String topic) {
        try (Connection c = dataSource.getConnection(); var ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, CHANNEL);
            ps.setString(2, self + " " + topic);
            ps.execute();
        } catch (SQLException e) {
            LOG.warn("services: other instances could not be told of a change: {}", e.toString());
        }
    }

    private void listen() {
        boolean first = true;
        while (running) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + CHANNEL);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                if (!first) {
                    onRemoteChange.accept(null); // whatever changed while no one listened
                }
                first = false;
                try {
                    while (running) {
                        PGNotification[] ns = pg.getNotifications(LISTEN_POLL_MILLIS);
                        Set<String> topics = new LinkedHashSet<>();
                        for (PGNotification n : ns == null ? new PGNotification[0] : ns) {
                            String p = n.getParameter() == null ? "" : n.getParameter();
                            int space = p.indexOf(' ');
                            String from = space < 0 ? p : p.substring(0, space);
                            if (!self.equals(from)) {
                                topics.add(space < 0 ? STATE : p.substring(space + 1)); // an older instance names no topic
                            }
                        }
                        topics.forEach(onRemoteChange);
                    }
                } finally {
                    try (Statement st = c.createStatement()) {
                        st.execute("UNLISTEN *");
                    } catch (SQLException ignored) {
                        // the connection is going away anyway
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (running) {
                    LOG.warn("services: the change listener lost its connection: {}", e.toString());
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        listener.interrupt();
        try {
            listener.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
