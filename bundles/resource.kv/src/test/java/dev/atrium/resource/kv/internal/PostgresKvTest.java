package dev.atrium.resource.kv.internal;

import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.resource.api.KvFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The kv contract on a fresh database of the machine's PostgreSQL, with the bundle's own migration. */
class PostgresKvTest extends KvFacetContract {

    private static TestPostgres database;
    private static PostgresKv provider;

    @BeforeAll
    static void createDatabase() throws Exception {
        database = TestPostgres.create("atrium_kv");
        provider = new PostgresKv(
                database.dataSource(),
                database.migrations(PostgresKv.class, "/db/migration/V1__kv.sql"),
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
    protected TestResourceContext newResource() {
        return new TestResourceContext(database.dataSource(), null, Map.of());
    }
}
