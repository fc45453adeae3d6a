package dev.atrium.resource.queue.internal;

import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.resource.api.QueueFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.postgresql.ds.PGSimpleDataSource;

/** The queue contract on a fresh database of the machine's PostgreSQL, with the bundle's own migration. */
class PostgresQueueTest extends QueueFacetContract {

    private static TestPostgres database;
    private static PostgresQueue provider;

    @BeforeAll
    static void createDatabase() throws Exception {
        database = TestPostgres.create("atrium_queue");
        provider = new PostgresQueue(
                database.dataSource(),
                database.migrations(PostgresQueue.class, "/db/migration/V1__queue.sql"),
                TestPostgres.noBundleContext());
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        database.close();
    }

    @Override
    protected ResourceProvider provider() {
        return provider;
    }

    @Override
    protected TestResourceContext newResource(Map<String, ?> config) throws Exception {
        return new TestResourceContext(
                database.dataSource(), null, provider.configSchema().validate(config));
    }

    @Override
    protected List<String> consumerCommand(TestResourceContext r) {
        return List.of(Consumer.class.getName(), database.url(), r.resourceId());
    }

    /** A consumer in a process of its own: the provider on the same database, one receive, then it waits to be killed. */
    public static final class Consumer {
        public static void main(String[] args) throws Exception {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(args[0]);
            PostgresQueue queue = new PostgresQueue(ds, bundle -> 0, TestPostgres.noBundleContext());
            consumeOneAndHang(
                    queue,
                    new TestResourceContext(
                            args[1], ds, null, queue.configSchema().validate(Map.of())));
        }
    }
}
