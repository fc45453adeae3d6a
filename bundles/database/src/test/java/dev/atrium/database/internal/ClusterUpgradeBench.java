package dev.atrium.database.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How long the upgrade of a PostgreSQL 14 cluster to 18 takes for a given amount of data (bench/pg-upgrade.sh; not
 * part of the tests): {@code bench.rows} rows of about {@code bench.rowBytes} bytes in a table shaped like Atrium's
 * (a text key, jsonb, text, a timestamp; a primary key, an index, a trigger), and as many in a second table that
 * references it.
 */
class ClusterUpgradeBench {

    private static final PgBinaryResolver PREVIOUS =
            (system, machine) -> ClusterUpgradeBench.class.getResourceAsStream(ClusterUpgrade.PREVIOUS_BINARIES);
    private static final PgBinaryResolver CURRENT =
            (system, machine) -> ClusterUpgradeBench.class.getResourceAsStream("/postgres-linux-x86_64.txz");

    @Test
    void upgrade(@TempDir Path data) throws Exception {
        long rows = Long.getLong("bench.rows", 1_000_000);
        int rowBytes = Integer.getInteger("bench.rowBytes", 200);
        Files.createDirectories(data.resolve("pg"));
        try (EmbeddedPostgres old = EmbeddedPostgres.builder()
                        .setDataDirectory(data.resolve("pg"))
                        .setCleanDataDirectory(false)
                        .setPgBinaryResolver(PREVIOUS)
                        .start();
                Connection c = old.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            long loading = System.nanoTime();
            s.execute(
                    "CREATE TABLE items (id text PRIMARY KEY, space_id text NOT NULL, doc jsonb NOT NULL, body text NOT NULL,"
                            + " created_at timestamptz NOT NULL DEFAULT now())");
            s.execute("CREATE INDEX items_space ON items (space_id, created_at)");
            s.execute("CREATE TABLE item_events (seq bigserial PRIMARY KEY, item_id text NOT NULL REFERENCES items (id)"
                    + " ON DELETE CASCADE, kind text NOT NULL)");
            s.execute("CREATE FUNCTION count_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$");
            s.execute(
                    "CREATE TRIGGER item_events_counted AFTER INSERT ON item_events FOR EACH ROW EXECUTE FUNCTION count_events()");
            s.execute("INSERT INTO items (id, space_id, doc, body) SELECT 'itm_' || i, 'spc_' || (i % 1000),"
                    + " jsonb_build_object('n', i, 'tags', jsonb_build_array('a', 'b')), repeat(md5(i::text), "
                    + Math.max(1, rowBytes / 32)
                    + ") FROM generate_series(1, " + rows + ") i");
            s.execute("INSERT INTO item_events (item_id, kind) SELECT 'itm_' || i, 'created' FROM generate_series(1, "
                    + rows + ") i");
            try (ResultSet r = s.executeQuery("SELECT pg_database_size('postgres')")) {
                r.next();
                System.out.printf(
                        "pg-upgrade bench: %,d + %,d rows, database %,d MB on PostgreSQL 14, loaded in %d s%n",
                        rows, rows, r.getLong(1) >> 20, (System.nanoTime() - loading) / 1_000_000_000);
            }
        }
        long started = System.nanoTime();
        new ClusterUpgrade(data, PREVIOUS, CURRENT).upgrade();
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.printf(
                "pg-upgrade bench: upgraded to PostgreSQL %s in %,d ms (%,.0f rows/s)%n",
                ClusterUpgrade.CURRENT, millis, 2.0 * rows * 1000 / Math.max(1, millis));
        try (EmbeddedPostgres fresh = EmbeddedPostgres.builder()
                        .setDataDirectory(data.resolve("pg"))
                        .setCleanDataDirectory(false)
                        .setPgBinaryResolver(CURRENT)
                        .start();
                Connection c = fresh.getPostgresDatabase().getConnection();
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT count(*) FROM item_events")) {
            r.next();
            assertEquals(rows, r.getLong(1));
        }
    }
}
