package dev.atrium.actions.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the instance that runs a job is alive: each instance holds a session advisory lock named after it on a
 * connection of its own while it runs, so a dead process's lock is gone at once (PostgreSQL ends its session) and its
 * jobs can be failed without waiting for their heartbeat to grow old.
 */
final class InstanceLiveness implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InstanceLiveness.class);
    private static final int LOCK_CLASS = 0x41435431; // "ACT1"

    private final DataSource dataSource;
    private final String instanceId;
    private Connection held;

    InstanceLiveness(DataSource dataSource, String instanceId) {
        this.dataSource = dataSource;
        this.instanceId = instanceId;
    }

    /** Takes (or takes again, after the database went away) this instance's lock. */
    synchronized void hold() {
        try {
            if (held != null && held.isValid(2)) {
                return;
            }
            if (held != null) {
                closeQuietly();
            }
            Connection c = dataSource.getConnection();
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?, hashtext(?))")) {
                ps.setInt(1, LOCK_CLASS);
                ps.setString(2, instanceId);
                ps.execute();
            }
            held = c;
        } catch (SQLException e) {
            LOG.debug("the Actions instance lock is not held now: {}", e.toString());
        }
    }

    /** Whether another instance's lock is free, that is, it is gone. */
    boolean dead(String otherInstanceId) {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT pg_try_advisory_lock(?, hashtext(?)) AND pg_advisory_unlock(?, hashtext(?))")) {
            ps.setInt(1, LOCK_CLASS);
            ps.setString(2, otherInstanceId);
            ps.setInt(3, LOCK_CLASS);
            ps.setString(4, otherInstanceId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        } catch (SQLException e) {
            return false;
        }
    }

    @Override
    public synchronized void close() {
        closeQuietly();
    }

    private void closeQuietly() {
        try {
            if (held != null) {
                // the pool keeps the connection: the lock must not outlive this instance in it
                try (PreparedStatement ps = held.prepareStatement("SELECT pg_advisory_unlock_all()")) {
                    ps.execute();
                } catch (SQLException gone) {
                    // a connection that broke holds no lock any more
                }
                held.close();
            }
        } catch (SQLException e) {
            LOG.debug("closing the Actions instance lock's connection: {}", e.toString());
        }
        held = null;
    }
}
