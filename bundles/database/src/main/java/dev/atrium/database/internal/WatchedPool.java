package dev.atrium.database.internal;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.LoggerFactory;

/**
 * The pool as the capabilities get it, with a watch on whether the database answers: a connection of its own asks
 * {@code SELECT 1} every {@value #PROBE_MILLIS} ms. While the database does not answer, a caller waits at most
 * {@value #UNREACHABLE_WAIT_MILLIS} ms for a connection instead of the pool's configured wait (10 s by default): there is
 * nothing to wait for, and a request held that long outlasts its client's patience, where a quick 503 with
 * {@code Retry-After} lets it retry. Each change is told to a listener, which publishes it for the server's health.
 */
final class WatchedPool implements DataSource, AutoCloseable {

    private static final org.slf4j.Logger LOG = LoggerFactory.getLogger(WatchedPool.class);

    static final long PROBE_MILLIS = 1_000;
    /** The wait for a connection while the database is known not to answer. */
    static final long UNREACHABLE_WAIT_MILLIS = 250;
    /** Seconds the probe waits to connect and for its answer. */
    private static final int PROBE_TIMEOUT_SECONDS = 2;

    private final HikariDataSource pool;
    private final PGSimpleDataSource probeTarget;
    private final Thread watcher;
    private final java.util.function.Consumer<String> changed;
    private volatile boolean running = true;
    /** Why the database does not answer, or null while it does. */
    private volatile String unreachable;

    private final java.util.concurrent.atomic.LongAdder timeouts = new java.util.concurrent.atomic.LongAdder();

    private Connection probe;

    /** @param changed told why the database stopped answering, or null once it answers again */
    WatchedPool(HikariDataSource pool, PGSimpleDataSource target, java.util.function.Consumer<String> changed) {
        this.pool = pool;
        this.changed = changed;
        probeTarget = new PGSimpleDataSource();
        probeTarget.setURL(target.getURL());
        probeTarget.setUser(target.getUser());
        probeTarget.setPassword(target.getPassword());
        probeTarget.setConnectTimeout(PROBE_TIMEOUT_SECONDS);
        probeTarget.setLoginTimeout(PROBE_TIMEOUT_SECONDS);
        probeTarget.setSocketTimeout(PROBE_TIMEOUT_SECONDS + 1);
        probeTarget.setApplicationName("atrium-reachability");
        watcher = new Thread(this::watch, "atrium-database-watch");
        watcher.setDaemon(true);
        watcher.start();
    }

    @Override
    public Connection getConnection() throws SQLException {
        try {
            if (unreachable == null) {
                return pool.getConnection();
            }
            // the pool's own wait is fixed when it is built; its pool object takes a shorter one per call
            if (pool.getHikariPoolMXBean() instanceof HikariPool hikari) {
                return hikari.getConnection(UNREACHABLE_WAIT_MILLIS);
            }
            throw new SQLTransientConnectionException("the database does not answer: " + unreachable, "08001");
        } catch (SQLTransientConnectionException e) {
            timeouts.increment();
            throw e;
        }
    }

    /** Waits for a connection that ended without one, since the start. */
    long timeouts() {
        return timeouts.sum();
    }

    com.zaxxer.hikari.HikariPoolMXBean figures() {
        return pool.getHikariPoolMXBean();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("the pool connects with its configured user");
    }

    private void watch() {
        while (running) {
            String problem = probeOnce();
            String was = unreachable;
            unreachable = problem;
            if (problem != null && was == null) {
                LOG.warn(
                        "the database does not answer ({}); requests that need it are answered 503 until it does",
                        problem);
                changed.accept(problem);
            } else if (problem == null && was != null) {
                LOG.info("the database answers again");
                changed.accept(null);
            }
            try {
                Thread.sleep(PROBE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private String probeOnce() {
        try {
            if (probe == null) {
                probe = probeTarget.getConnection();
            }
            try (Statement st = probe.createStatement()) {
                st.setQueryTimeout(PROBE_TIMEOUT_SECONDS);
                st.execute("SELECT 1");
            }
            return null;
        } catch (SQLException e) {
            closeProbe();
            return e.getSQLState() == null ? e.getMessage() : e.getSQLState() + " " + e.getMessage();
        }
    }

    private void closeProbe() {
        if (probe != null) {
            try {
                probe.close();
            } catch (SQLException ignored) {
                // it is gone either way
            }
            probe = null;
        }
    }

    /** Stops the watch and closes its connection, then the pool. */
    @Override
    public void close() {
        running = false;
        watcher.interrupt();
        try {
            watcher.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeProbe();
        pool.close();
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return pool.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        pool.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        pool.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return pool.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return pool.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        return pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || pool.isWrapperFor(iface);
    }
}
