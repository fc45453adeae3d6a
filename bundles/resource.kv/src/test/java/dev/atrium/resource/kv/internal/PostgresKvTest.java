package dev.atrium.resource.kv.internal;

import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

import dev.atrium.kernel.api.SchemaMigrations;

import dev.atrium.resource.api.KvFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;

/** The kv contract on a fresh database of the PostgreSQL at 127.0.0.1:5432 (ATRIUM_TEST_PG overrides), with the bundle's own migration. */
class PostgresKvTest extends KvFacetContract {

    private static final String HOST = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
    private static final String DATABASE = "atrium_kv_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static PGSimpleDataSource dataSource;
    private static PostgresKv provider;

    @BeforeAll
    static void createDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        }
        dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://" + HOST + "/" + DATABASE + "?user=postgres");
        // the kernel's migrations run the bundle's scripts; here the one script runs directly
        SchemaMigrations migrations = bundle -> {
            try (InputStream in = PostgresKv.class.getResourceAsStream("/db/migration/V1__kv.sql");
                    Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                return 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        BundleContext context = (BundleContext) Proxy.newProxyInstance(PostgresKvTest.class.getClassLoader(),
                new Class<?>[] { BundleContext.class }, (proxy, method, args) -> null);
        provider = new PostgresKv(dataSource, migrations, context);
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres"); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
        }
    }

    @Override
    protected ResourceProvider provider() {
        return provider;
    }

    @Override
    protected TestResourceContext newResource() {
        return new TestResourceContext(dataSource, null, Map.of());
    }
}
