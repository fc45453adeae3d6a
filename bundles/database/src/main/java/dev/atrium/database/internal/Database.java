package dev.atrium.database.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the process's connection pool and, with no external URL configured, the embedded PostgreSQL it
 * points at. Both come up on a thread of their own so the rest of the runtime starts meanwhile; the
 * DataSource is registered only once the database answers, and unregistered before the pool closes and the
 * embedded server stops, so no consumer ever holds a dead pool.
 */
@Component(
        configurationPid = "dev.atrium.database",
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        service = {})
@Designate(ocd = DatabaseConfig.class)
@SuppressWarnings("JdkObsolete") // service properties are a Dictionary: a Hashtable is what one is
public class Database {

    private static final Logger LOG = LoggerFactory.getLogger(Database.class);

    /** The DataSource's service property that says whether the database is embedded or external. */
    static final String KIND = "atrium.database";
    /** The DataSource's service property present while the database does not answer, with why (see kernel's health). */
    static final String UNREACHABLE = "atrium.database.unreachable";

    /** How long the exit backstop waits for the framework to stop this component (its own wait is 25 s). */
    private static final long EXIT_WAIT_SECONDS = 30;
    /** How long the embedded server's stop waits for the connections the pool closed to end in the server. */
    private static final long CLIENTS_WAIT_MILLIS = 5_000;

    private final Thread starter;
    private EmbeddedPostgres embedded;
    private Path embeddedData;
    private WatchedPool pool;
    /** Volatile: the pool's watch reads it without the lock, which a stop holds while it waits for the watch to end. */
    private volatile ServiceRegistration<DataSource> registration;

    private ServiceRegistration<io.micrometer.core.instrument.binder.MeterBinder> meters;

    private boolean stopped;

    /**
     * Stops an embedded server the framework did not stop in time when the JVM exits (the framework is stopped on
     * SIGTERM by the config bundle and stops this component last; this is the backstop against an orphaned postgres).
     */
    private final Thread exitBackstop = new Thread(this::stopOnExit, "atrium-database-exit");

    private final CountDownLatch released = new CountDownLatch(1);

    /** Aries' JAX-RS whiteboard, whose start waits for the database (see {@link #holdWhiteboard}). */
    static final String WHITEBOARD = "org.apache.aries.jax.rs.whiteboard";
    /** The longest the whiteboard's start waits for the database: a database that never comes must not hide /healthz. */
    private static final long WHITEBOARD_WAIT_SECONDS = 20;
    /** Counted down once the start has registered the DataSource, failed, or been stopped. */
    private final CountDownLatch settled = new CountDownLatch(1);

    private final BundleContext context;
    private final SynchronousBundleListener holdWhiteboard = this::holdWhiteboard;

    @Activate
    public Database(BundleContext context, DatabaseConfig config) {
        this.context = context;
        context.addBundleListener(holdWhiteboard);
        starter = new Thread(() -> start(context, config), "atrium-database-start");
        starter.start();
        Runtime.getRuntime().addShutdownHook(exitBackstop);
    }

    /**
     * Holds the whiteboard bundle's start (the start-level thread, in its STARTING event; the launcher starts it at
     * a level of its own, after the capabilities) until the database is up. The capabilities register their JAX-RS
     * resources when the DataSource arrives, and Aries rebuilds the whole CXF application for every resource
     * registered after it runs: on a fresh data directory, where initdb makes the database late, that was some 60
     * builds. Registered before it starts, they make one.
     */
    private void holdWhiteboard(BundleEvent event) {
        if (event.getType() != BundleEvent.STARTING
                || !WHITEBOARD.equals(event.getBundle().getSymbolicName())
                || settled.getCount() == 0) {
            return;
        }
        long started = System.nanoTime();
        try {
            if (!settled.await(WHITEBOARD_WAIT_SECONDS, TimeUnit.SECONDS)) {
                LOG.warn("the JAX-RS whiteboard starts without the database after {} s", WHITEBOARD_WAIT_SECONDS);
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        LOG.debug("the JAX-RS whiteboard waited {} ms for the database", (System.nanoTime() - started) / 1_000_000);
    }

    private void stopOnExit() {
        synchronized (this) {
            if (embedded == null) {
                return;
            }
        }
        try {
            released.await(EXIT_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            stopped = true;
            release();
        }
    }

    private void start(BundleContext context, DatabaseConfig config) {
        try {
            String url = config.url().isBlank() ? null : config.url().trim();
            PGSimpleDataSource target = new PGSimpleDataSource();
            EmbeddedPostgres pg = null;
            Path pgData = null;
            if (url != null) {
                target.setURL(url);
            } else {
                File data = new File(config.dataDirectory()).getAbsoluteFile();
                pg = startEmbedded(data, template(config));
                pgData = new File(data, "pg").toPath();
                target.setServerNames(new String[] {"127.0.0.1"});
                target.setPortNumbers(new int[] {pg.getPort()});
                target.setDatabaseName("postgres");
                target.setUser("postgres");
            }
            HikariConfig hc = new HikariConfig();
            hc.setPoolName("atrium");
            hc.setDataSource(target);
            hc.setMaximumPoolSize(config.maxPoolSize());
            // idle connections count against the server's max_connections, shared by every instance
            hc.setMinimumIdle(Math.min(config.minIdle(), config.maxPoolSize()));
            hc.setIdleTimeout(60_000);
            hc.setConnectionTimeout(config.connectionTimeoutMs());
            hc.setInitializationFailTimeout(30_000);
            String kind = pg == null ? "external" : "embedded";
            WatchedPool ds = new WatchedPool(new HikariDataSource(hc), target, problem -> published(kind, problem));
            synchronized (this) {
                embedded = pg;
                embeddedData = pgData;
                pool = ds;
                if (stopped) {
                    return;
                }
                registration = context.registerService(DataSource.class, ds, new Hashtable<>(Map.of(KIND, kind)));
                meters = context.registerService(
                        io.micrometer.core.instrument.binder.MeterBinder.class,
                        new PoolMeters(ds, kind),
                        new Hashtable<>(Map.of(KIND, kind)));
                LOG.info("database ready ({}{})", kind, pg == null ? "" : ", port " + pg.getPort());
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("the database could not be started; nothing that needs it will run", e);
        } finally {
            settled.countDown();
            synchronized (this) {
                if (stopped) {
                    release();
                }
            }
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        context.removeBundleListener(holdWhiteboard);
        settled.countDown();
        synchronized (this) {
            stopped = true;
            release();
        }
        starter.join(60_000);
        released.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(exitBackstop);
        } catch (IllegalStateException exiting) {
            // the JVM is exiting: the backstop runs and finds nothing left to stop
        }
    }

    /**
     * Publishes whether the database answers as a property of the DataSource's registration, which the server's health
     * reads: {@value #UNREACHABLE} holds why it does not, and is absent while it does. A changed property leaves the
     * components bound to the DataSource as they are.
     */
    private void published(String kind, String problem) {
        ServiceRegistration<DataSource> published = registration;
        if (published == null) {
            return;
        }
        Hashtable<String, Object> properties = new Hashtable<>(Map.of(KIND, kind));
        if (problem != null) {
            properties.put(UNREACHABLE, problem);
        }
        try {
            published.setProperties(properties);
        } catch (IllegalStateException unregistered) {
            // stopping: nobody asks any more
        }
    }

    /** Unregisters, closes the pool and stops the embedded server, each at most once; called holding the lock. */
    private void release() {
        if (meters != null) {
            meters.unregister();
            meters = null;
        }
        if (registration != null) {
            registration.unregister();
            registration = null;
        }
        if (pool != null) {
            pool.close();
            pool = null;
        }
        if (embedded != null) {
            awaitClientsGone();
            try {
                embedded.close();
            } catch (IOException e) {
                LOG.warn("embedded PostgreSQL did not stop cleanly", e);
            }
            embedded = null;
        }
    }

    /**
     * Waits for the connections the pool has just closed to end in the server: each server process ends a moment
     * after its client closed it (on a loaded machine, tens of ms), and the fast stop that follows terminated those
     * not yet gone, logging "terminating connection due to administrator command" as if a capability still used the
     * database. One still there after the wait is a user that was not stopped: the warning names it.
     */
    private void awaitClientsGone() {
        try {
            List<String> left = ClientConnections.awaitNone(embeddedData, CLIENTS_WAIT_MILLIS);
            if (!left.isEmpty()) {
                LOG.warn(
                        "embedded PostgreSQL stops with {} client connection(s) still open after {} ms: {}",
                        left.size(),
                        CLIENTS_WAIT_MILLIS,
                        left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final String BINARIES = "/postgres-linux-x86_64.txz";

    private static InputStream binaries(String system, String machine) {
        return Database.class.getResourceAsStream(BINARIES);
    }

    /** The cluster template for these binaries, or null when templates are off or the binaries cannot be told apart. */
    private static ClusterTemplate template(DatabaseConfig config) {
        String where = config.clusterTemplates().trim();
        if ("off".equalsIgnoreCase(where)) {
            return null;
        }
        long size;
        try {
            size = Database.class.getResource(BINARIES).openConnection().getContentLengthLong();
        } catch (IOException | RuntimeException e) {
            return null;
        }
        if (size <= 0) {
            return null;
        }
        Path root = where.isEmpty() ? Path.of(System.getProperty("java.io.tmpdir"), "embedded-pg") : Path.of(where);
        // the binaries' size names them well enough: a template they cannot start from is discarded anyway
        return new ClusterTemplate(root.resolve("atrium-cluster-" + size + "-v1"));
    }

    private static EmbeddedPostgres startEmbedded(File data, ClusterTemplate template) throws IOException {
        File pgData = new File(data, "pg");
        ClusterUpgrade upgrade = new ClusterUpgrade(
                data.toPath(),
                (system, machine) -> Database.class.getResourceAsStream(ClusterUpgrade.PREVIOUS_BINARIES),
                Database::binaries);
        if (upgrade.needed()) {
            upgrade.upgrade();
        }
        if (!pgData.isDirectory() && !pgData.mkdirs()) {
            throw new IOException("cannot create " + pgData);
        }
        long started = System.nanoTime();
        boolean fresh = !new File(pgData, "postgresql.conf").exists();
        boolean copied = fresh && template != null && template.copyTo(pgData.toPath());
        EmbeddedPostgres pg;
        try {
            pg = startServer(pgData, fresh && !copied ? template : null);
        } catch (IOException | RuntimeException e) {
            if (!copied) {
                throw e;
            }
            LOG.warn(
                    "the embedded PostgreSQL did not start from the cluster template {}; discarding it and running initdb",
                    template.dir(),
                    e);
            template.discard();
            ClusterTemplate.emptyQuietly(pgData.toPath());
            copied = false;
            pg = startServer(pgData, null);
        }
        LOG.info(
                "embedded PostgreSQL started in {} ms in {}{}",
                (System.nanoTime() - started) / 1_000_000,
                pgData,
                copied ? " (a copy of the cluster template " + template.dir() + ")" : "");
        return pg;
    }

    /** Starts the server in {@code pgData}; a cluster initdb makes there is kept in {@code keepAs} before the server runs. */
    static EmbeddedPostgres startServer(File pgData, ClusterTemplate keepAs) throws IOException {
        return EmbeddedPostgres.builder()
                // not zonky's own choice, which an outgoing connection can take before PostgreSQL binds it
                .setPort(EmbeddedStarts.port())
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                // stopped by this component, after everything that uses it: the library's own JVM shutdown hook
                // stopped it on SIGTERM while the framework was still stopping the capabilities using it
                .setRegisterShutdownHook(false)
                // the library's default for tests is off: a commit answered before its WAL is flushed, lost for good if
                // postgres is killed (OOM, power) within the next ~0.6 s. A 201 must mean the row is there.
                .setServerConfig("synchronous_commit", "on")
                .setPgBinaryResolver(Database::binaries)
                .setDataDirectoryCustomizer(dir -> {
                    if (keepAs != null) {
                        try {
                            keepAs.keep(dir.toPath());
                        } catch (IOException e) {
                            LOG.warn(
                                    "could not keep a cluster template in {}: every fresh start runs initdb",
                                    keepAs.dir(),
                                    e);
                        }
                    }
                })
                .start();
    }
}
