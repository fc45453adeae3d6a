package dev.atrium.services.internal;

import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.Ids;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the other instances on the same PostgreSQL that the services' desired state changed ({@code NOTIFY
 * atrium_services}), and makes this instance apply the stored state again when another one says so. A notification
 * names what changed: {@link #STATE} (deployments, env, domains…). Each instance runs
 * every deployment on its own provider and keeps its own routing table, both derived from the rows: a deploy, rollback
 * or env change made through one instance reaches the others within a notification. While the kernel's listening
 * connection is lost, the set is applied again once it is back (changes may have been missed meanwhile). The changes
 * are applied on the deployer's threads ({@code reconcileLater}), never on the kernel's listening thread.
 */
final class ChangeFeed implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeFeed.class);
    static final String CHANNEL = "atrium_services";
    static final String STATE = "state";

    private final DataSource dataSource;

    private final String self = Ids.random("", 16);
    private final DatabaseChannels.Subscription subscription;

    ChangeFeed(DataSource dataSource, DatabaseChannels channels, Consumer<String> onRemoteChange) {
        this.dataSource = dataSource;

        this.subscription = channels.listen(CHANNEL, new DatabaseChannels.Listener() {
            private boolean first = true;

            @Override
            public void listening() {
                if (!first) {
                    onRemoteChange.accept(null); // whatever changed while no one listened
                }
                first = false;
            }

            @Override
            public void notified(String payload) {
                int space = payload.indexOf(' ');
                String from = space < 0 ? payload : payload.substring(0, space);
                if (!self.equals(from)) {
                    onRemoteChange.accept(
                            space < 0 ? STATE : payload.substring(space + 1)); // an older instance names no topic
                }
            }
        });
    }

    /** After a change this instance made and applied. */
    void announce() {
        announce(STATE);
    }

    /** After a change of {@code topic} this instance made. */
    void announce(String topic) {
        try (Connection c = dataSource.getConnection();
                var ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, CHANNEL);
            ps.setString(2, self + " " + topic);
            ps.execute();
        } catch (SQLException e) {
            LOG.warn("services: other instances could not be told of a change: {}", e.toString());
        }
    }

    @Override
    public void close() {
        subscription.close();
    }
}
