package dev.atrium.database.internal;

import java.io.File;
import java.io.IOException;
import java.util.Map;

import javax.sql.DataSource;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * Owns the process's connection pool and, with no external URL configured, the embedded PostgreSQL it
 * points at. The DataSource is registered only once the database answers, and unregistered before the
 * pool closes and the embedded server stops, so no consumer ever holds a dead pool.
 */
@Component(configurationPid = "dev.atrium.database", configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = DatabaseConfig.class)
public class Database {

    private static final Logger LOG = LoggerFactory.getLogger(Database.class);

    private final EmbeddedPostgres embedded;
    private final HikariDataSource pool;
    private final ServiceRegistration<DataSource> registration;

    @Activate
    public Database(BundleContext context, DatabaseConfig config) throws IOException {
        String url = firstNonBlank(config.url(), context.getProperty("atrium.db.url"), System.getenv("ATRIUM_DB_URL"));
        PGSimpleDataSource target = new PGSimpleDataSource();
        String kind;
        if (url != null) {
            target.setURL(url);
            embedded = null;
            kind = "external";
        } else {
            embedded = startEmbedded(dataDirectory(context));
            target.setServerNames(new String[] { "127.0.0.1" });
            target.setPortNumbers(new int[] { embedded.getPort() });
            target.setDatabaseName("postgres");
            target.setUser("postgres");
            kind = "embedded";
        }
        HikariConfig hc = new HikariConfig();
        hc.setPoolName("atrium");
        hc.setDataSource(target);
        hc.setMaximumPoolSize(config.maxPoolSize());
        hc.setConnectionTimeout(config.connectionTimeoutMs());
        hc.setInitializationFailTimeout(30_000);
        try {
            pool = new HikariDataSource(hc);
        } catch (RuntimeException e) {
            stopEmbedded();
            throw e;
        }
        registration = context.registerService(DataSource.class, pool,
                new java.util.Hashtable<>(Map.of("atrium.database", kind)));
        LOG.info("database ready ({}{})", kind, embedded == null ? "" : ", port " + embedded.getPort());
    }

    @Deactivate
    void deactivate() {
        registration.unregister();
        pool.close();
        stopEmbedded();
    }

    private static File dataDirectory(BundleContext context) {
        String data = firstNonBlank(context.getProperty("atrium.data"), System.getenv("ATRIUM_DATA"));
        return new File(data == null ? "data" : data).getAbsoluteFile();
    }

    private static EmbeddedPostgres startEmbedded(File data) throws IOException {
        File pgData = new File(data, "pg");
        if (!pgData.isDirectory() && !pgData.mkdirs()) {
            throw new IOException("cannot create " + pgData);
        }
        long started = System.nanoTime();
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                .setPgBinaryResolver((system, machine) -> Database.class.getResourceAsStream("/postgres-linux-x86_64.txz"))
                .start();
        LOG.info("embedded PostgreSQL started in {} ms in {}", (System.nanoTime() - started) / 1_000_000, pgData);
        return pg;
    }

    private void stopEmbedded() {
        if (embedded != null) {
            try {
                embedded.close();
            } catch (IOException e) {
                LOG.warn("embedded PostgreSQL did not stop cleanly", e);
            }
        }
    }

    private static String firstNonBlank(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v.trim();
            }
        }
        return null;
    }
}
