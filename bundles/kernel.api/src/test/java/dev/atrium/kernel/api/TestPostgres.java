package dev.atrium.kernel.api;

import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A fresh database on the machine's PostgreSQL (127.0.0.1:5432, or ATRIUM_TEST_PG as host:port) for a bundle's own
 * tests, dropped on {@link #close()}; with the bundle's migration scripts run as the kernel would run them.
 */
public final class TestPostgres implements AutoCloseable {

    private static final String HOST = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
    private static final int POOL = 16;
    private final String name;
    private final PGSimpleDataSource direct;
    private final java.util.concurrent.BlockingQueue<Connection> idle =
            new java.util.concurrent.LinkedBlockingQueue<>();
    private final java.util.concurrent.atomic.AtomicInteger opened = new java.util.concurrent.atomic.AtomicInteger();
    /** Pooled as the server's DataSource is: a connection per call would make the tests measure connecting. */
    private final PGSimpleDataSource dataSource = new PGSimpleDataSource() {
        private static final long serialVersionUID = 1L;

        @Override
        public Connection getConnection() throws SQLException {
            Connection physical = idle.poll();
            if (physical == null && opened.incrementAndGet() > POOL) {
                opened.decrementAndGet();
                try {
                    physical = idle.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted waiting for a pooled connection", e);
                }
            } else if (physical == null) {
                physical = direct.getConnection();
            }
            Connection lent = physical;
            boolean[] returned = {false};
            return (Connection) Proxy.newProxyInstance(
                    TestPostgres.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().equals("close")) {
                            if (!returned[0]) {
                                returned[0] = true;
                                if (lent.isClosed()) {
                                    // lost (its backend terminated, say): never lent again
                                    opened.decrementAndGet();
                                    return null;
                                }
                                if (!lent.getAutoCommit()) {
                                    lent.rollback();
                                    lent.setAutoCommit(true);
                                }
                                idle.add(lent);
                            }
                            return null;
                        }
                        if (method.getName().equals("isClosed")) {
                            return returned[0];
                        }
                        try {
                            return method.invoke(lent, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    };

    private TestPostgres(String name) {
        this.name = name;
        this.direct = new PGSimpleDataSource();
        direct.setUrl("jdbc:postgresql://" + HOST + "/" + name + "?user=postgres");
        dataSource.setUrl(direct.getUrl());
    }

    /** A new database named {@code <prefix>_<random>}. */
    public static TestPostgres create(String prefix) throws SQLException {
        String name =
                prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        admin("CREATE DATABASE " + name);
        // A commit returns before its WAL is flushed (about 0.5 ms less a commit on a disk that flushes, which the
        // queue's ten thousand messages made 10 s): the server's answers and what other connections see are the same,
        // only a crash of the PostgreSQL itself could lose the last commits, and no test crashes the machine's one.
        admin("ALTER DATABASE " + name + " SET synchronous_commit = off");
        return new TestPostgres(name);
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public String url() {
        return dataSource.getUrl();
    }

    /**
     * The migrations a component's constructor gets: they run {@code scripts} (class-path resources of {@code owner}'s
     * bundle, such as {@code /db/migration/V1__x.sql}) in order, once, whatever bundle they are asked for.
     */
    public SchemaMigrations migrations(Class<?> owner, String... scripts) {
        boolean[] done = {false};
        return bundle -> {
            synchronized (done) {
                if (!done[0]) {
                    for (String script : scripts) {
                        run(owner, script);
                    }
                    done[0] = true;
                }
            }
            return scripts.length;
        };
    }

    /** Runs one SQL script from {@code owner}'s class path. */
    public void run(Class<?> owner, String script) {
        try (InputStream in = owner.getResourceAsStream(script);
                Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            if (in == null) {
                throw new IllegalArgumentException("no script " + script + " beside " + owner.getName());
            }
            s.execute(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException("the script " + script + " failed", e);
        }
    }

    /** A bundle context for a component's constructor outside a framework: every call answers null. */
    public static BundleContext noBundleContext() {
        return (BundleContext) Proxy.newProxyInstance(
                TestPostgres.class.getClassLoader(),
                new Class<?>[] {BundleContext.class},
                (proxy, method, args) -> null);
    }

    @Override
    public void close() throws SQLException {
        for (Connection c; (c = idle.poll()) != null; ) {
            c.close();
        }
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }

    private static void admin(String statement) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres");
                Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }
}
