package dev.atrium.resource.queue.internal;

import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.resource.api.QueueFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;

/** The queue contract on a fresh database of the PostgreSQL at 127.0.0.1:5432 (ATRIUM_TEST_PG overrides), with the bundle's own migration. */
class PostgresQueueTest extends QueueFacetContract {

    private static final String HOST = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
    private static final String DATABASE = "atrium_queue_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static PGSimpleDataSource dataSource;
    private static PostgresQueue provider;

    @BeforeAll
    static void createDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        }
        dataSource = dataSource(url());
        SchemaMigrations migrations = bundle -> {
            try (InputStream in = PostgresQueue.class.getResourceAsStream("/db/migration/V1__queue.sql");
                    Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                return 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        provider = new PostgresQueue(dataSource, migrations, noContext());
    }

    static String url() {
        return "jdbc:postgresql://" + HOST + "/" + DATABASE + "?user=postgres";
    }

    static PGSimpleDataSource dataSource(String url) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        return ds;
    }

    static BundleContext noContext() {
        return (BundleContext) Proxy.newProxyInstance(PostgresQueueTest.class.getClassLoader(), new Class<?>[] { BundleContext.class },
                (proxy, method, args) -> null);
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
    protected TestResourceContext newResource(Map<String, ?> config) throws Exception {
        return new TestResourceContext(dataSource, null, provider.configSchema().validate(config));
    }

    @Override
    protected List<String> consumerCommand(TestResourceContext r) {
        return List.of(Consumer.class.getName(), url(), r.resourceId());
    }

    /** A consumer in a process of its own: the provider on the same database, one receive, then it waits to be killed. */
    public static final class Consumer {
        public static void main(String[] args) throws Exception {
            PGSimpleDataSource ds = dataSource(args[0]);
            PostgresQueue queue = new PostgresQueue(ds, bundle -> 0, noContext());
            consumeOneAndHang(queue, new TestResourceContext(args[1], ds, null, queue.configSchema().validate(Map.of())));
        }
    }
}
