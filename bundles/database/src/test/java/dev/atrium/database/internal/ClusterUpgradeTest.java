package dev.atrium.database.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real PostgreSQL 14 and 18 servers, started from the binaries the bundle carries. */
class ClusterUpgradeTest {

    private static final PgBinaryResolver PREVIOUS =
            (system, machine) -> ClusterUpgradeTest.class.getResourceAsStream(ClusterUpgrade.PREVIOUS_BINARIES);
    private static final PgBinaryResolver CURRENT =
            (system, machine) -> ClusterUpgradeTest.class.getResourceAsStream("/postgres-linux-x86_64.txz");

    /** What the checks compare, read from the old cluster before the upgrade and from the new one after it. */
    private static final List<String> FINGERPRINTS = List.of(
            "SELECT md5(string_agg(p::text, '|' ORDER BY id)) FROM public.parent p",
            "SELECT md5(string_agg(c::text, '|' ORDER BY id)) FROM public.child c",
            "SELECT n::text FROM public.counts",
            "SELECT string_agg(\"Key\", ',' ORDER BY \"Key\") FROM other.\"Mixed Case\"",
            "SELECT string_agg(indexdef, ';' ORDER BY indexname) FROM pg_indexes WHERE schemaname IN ('public', 'other')",
            "SELECT string_agg(conname || ':' || pg_get_constraintdef(oid), ';' ORDER BY conname) FROM pg_constraint"
                    + " WHERE connamespace IN ('public'::regnamespace, 'other'::regnamespace) AND contype <> 'n'",
            "SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal");

    /**
     * PostgreSQL 14's initdb (1.5 to 2.5 s) runs once for the class: the first fresh cluster is kept right after initdb,
     * as the server keeps its own template (ClusterTemplate), and later fresh clusters of the tests are copies of it.
     * The upgrade's own new cluster is the product's and still made by initdb.
     */
    @TempDir
    static Path templates;

    private static ClusterTemplate previousTemplate;

    @BeforeAll
    static void template() {
        previousTemplate = new ClusterTemplate(templates.resolve("pg-" + ClusterUpgrade.PREVIOUS));
    }

    @Test
    void anUpgradeCarriesEveryRowDefinitionAndSequenceStateIntoTheCurrentMajor(@TempDir Path data) throws Exception {
        List<String> before;
        try (EmbeddedPostgres old = start(data.resolve("pg"), PREVIOUS)) {
            try (Connection c = old.getPostgresDatabase().getConnection();
                    Statement s = c.createStatement()) {
                s.execute("CREATE TABLE parent (id bigserial PRIMARY KEY, name text COLLATE \"C\" NOT NULL UNIQUE,"
                        + " doc jsonb, blob bytea, tags text[], created timestamptz NOT NULL DEFAULT now(),"
                        + " lower_name text GENERATED ALWAYS AS (lower(name)) STORED, CHECK (length(name) > 0))");
                s.execute("CREATE TABLE child (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                        + " parent_id bigint REFERENCES parent (id) ON DELETE CASCADE, note text)");
                s.execute("CREATE INDEX child_note ON child (lower(note)) WHERE note IS NOT NULL");
                s.execute("CREATE TABLE counts (n bigint NOT NULL)");
                s.execute("INSERT INTO counts VALUES (0)");
                s.execute("CREATE FUNCTION count_child() RETURNS trigger LANGUAGE plpgsql AS $$"
                        + " BEGIN UPDATE counts SET n = n + 1; RETURN NEW; END $$");
                s.execute(
                        "CREATE TRIGGER child_counted AFTER INSERT ON child FOR EACH ROW EXECUTE FUNCTION count_child()");
                s.execute("CREATE SCHEMA other");
                s.execute("CREATE TABLE other.\"Mixed Case\" (\"Key\" text PRIMARY KEY)");
                s.execute("INSERT INTO other.\"Mixed Case\" VALUES ('a'), ('B')");
                s.execute("CREATE SEQUENCE standalone START 100 INCREMENT 5");
                s.execute("SELECT nextval('standalone'), nextval('standalone')");
                s.execute("INSERT INTO parent (name, doc, blob, tags) SELECT 'name ' || i, jsonb_build_object('i', i,"
                        + " 'text', E'tab\\there\\nnewline \\\\ backslash é 😀'), decode(md5(i::text), 'hex'),"
                        + " ARRAY['x', NULL, 'y,z'] FROM generate_series(1, 1000) i");
                s.execute("INSERT INTO parent (name) VALUES (E'with\\ttab and \\\\N')");
                s.execute("INSERT INTO child (parent_id, note) VALUES (1, 'One'), (2, NULL), (3, 'Three')");
                s.execute("CREATE DATABASE second");
            }
            try (Connection c = old.getDatabase("postgres", "second").getConnection();
                    Statement s = c.createStatement()) {
                s.execute("CREATE TABLE t (x int)");
                s.execute("INSERT INTO t VALUES (1), (2), (3)");
            }
            before = fingerprints(old);
        }

        ClusterUpgrade upgrade = new ClusterUpgrade(data, PREVIOUS, CURRENT);
        assertTrue(upgrade.needed());
        Path kept = upgrade.upgrade();
        assertEquals(data.resolve("pg-14"), kept);
        assertEquals("14", ClusterUpgrade.major(kept), "the old cluster is kept as it was");
        assertEquals(ClusterUpgrade.CURRENT, ClusterUpgrade.major(data.resolve("pg")));
        assertFalse(Files.exists(data.resolve("pg.upgrading")));
        assertFalse(new ClusterUpgrade(data, PREVIOUS, CURRENT).needed(), "an upgraded cluster is upgraded once");

        try (EmbeddedPostgres upgraded = start(data.resolve("pg"), CURRENT)) {
            assertEquals(
                    before,
                    fingerprints(upgraded),
                    "rows, indexes, constraints and triggers are those of the old cluster");
            try (Connection c = upgraded.getPostgresDatabase().getConnection();
                    Statement s = c.createStatement()) {
                assertEquals(
                        ClusterUpgrade.CURRENT, one(s, "SELECT current_setting('server_version_num')::int / 10000"));
                assertEquals(
                        "1002", one(s, "SELECT nextval('parent_id_seq')"), "a serial continues after the last row");
                assertEquals(
                        "4", one(s, "INSERT INTO child (parent_id) VALUES (1) RETURNING id"), "so does an identity");
                assertEquals(
                        "4",
                        one(s, "SELECT n FROM counts"),
                        "the trigger fires on new rows, and did not on copied ones");
                assertEquals("110", one(s, "SELECT nextval('standalone')"));
                assertEquals("new", one(s, "INSERT INTO parent (name) VALUES ('NEW') RETURNING lower_name"));
                assertEquals("23505", state(s, "INSERT INTO parent (name) VALUES ('name 1')"));
                assertEquals("23503", state(s, "INSERT INTO child (parent_id) VALUES (99999)"));
                assertEquals("23514", state(s, "INSERT INTO parent (name) VALUES ('')"));
                assertEquals("428C9", state(s, "INSERT INTO child (id, parent_id) VALUES (100, 1)"));
                assertEquals(
                        "C",
                        one(
                                s,
                                "SELECT collation_name FROM information_schema.columns WHERE table_name = 'parent'"
                                        + " AND column_name = 'name'"));
            }
            try (Connection c = upgraded.getDatabase("postgres", "second").getConnection();
                    Statement s = c.createStatement()) {
                assertEquals("6", one(s, "SELECT sum(x) FROM t"), "every database of the cluster is copied");
            }
        }
    }

    @Test
    void aClusterHoldingWhatTheCopyDoesNotCarryIsRefusedAndLeftAsItWas(@TempDir Path data) throws Exception {
        try (EmbeddedPostgres old = start(data.resolve("pg"), PREVIOUS);
                Connection c = old.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE kept (x int)");
            s.execute("INSERT INTO kept VALUES (42)");
            s.execute("CREATE VIEW seen AS SELECT x FROM kept");
        }
        IOException refused =
                assertThrows(IOException.class, () -> new ClusterUpgrade(data, PREVIOUS, CURRENT).upgrade());
        assertTrue(refused.getMessage().contains("public.seen (a view)"), refused.getMessage());
        assertTrue(refused.getMessage().contains("left as it was"), refused.getMessage());
        assertEquals("14", ClusterUpgrade.major(data.resolve("pg")));
        assertFalse(Files.exists(data.resolve("pg.upgrading")), "the partial new cluster is removed");
        try (EmbeddedPostgres old = start(data.resolve("pg"), PREVIOUS);
                Connection c = old.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            assertEquals("42", one(s, "SELECT x FROM seen"));
        }
    }

    @Test
    void aClusterWhoseServerWasKilledIsRecoveredThenUpgradedWithEveryCommittedRow(@TempDir Path data) throws Exception {
        Files.createDirectories(data.resolve("pg"));
        // committed means flushed, as the server runs it (Database): the library's default for tests would lose the
        // rows
        EmbeddedPostgres old = fromTemplate(data.resolve("pg"), PREVIOUS)
                .setServerConfig("synchronous_commit", "on")
                .start();
        try (Connection c = old.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE kept (x int PRIMARY KEY)");
            s.execute("INSERT INTO kept SELECT generate_series(1, 1000)");
        }
        // SIGKILL, as a power cut or an OOM kill would leave it: no checkpoint, a postmaster.pid left behind
        long postmaster = Long.parseLong(
                Files.readAllLines(data.resolve("pg/postmaster.pid")).get(0).trim());
        ProcessHandle.of(postmaster).orElseThrow().destroyForcibly();
        for (long until = System.nanoTime() + 10_000_000_000L;
                ProcessHandle.of(postmaster).isPresent();
                Thread.sleep(20)) {
            assertTrue(System.nanoTime() < until, "postgres did not die");
        }
        ProcessHandle.allProcesses()
                .filter(p -> p.info()
                        .arguments()
                        .map(a -> String.join(" ", a).contains(data.toString()))
                        .orElse(false))
                .forEach(ProcessHandle::destroyForcibly);
        assertTrue(Files.exists(data.resolve("pg/postmaster.pid")));
        try {
            // the library's lock on the directory, which a dead JVM would have released
            old.close();
        } catch (IOException stopFailed) {
            // pg_ctl found no server to stop
        }
        assertTrue(Files.exists(data.resolve("pg/postmaster.pid")), "the killed server's pid file is still there");

        new ClusterUpgrade(data, PREVIOUS, CURRENT).upgrade();
        try (EmbeddedPostgres upgraded = start(data.resolve("pg"), CURRENT);
                Connection c = upgraded.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            assertEquals(
                    "1000", one(s, "SELECT count(*) FROM kept"), "the old server's recovery replays what it committed");
        }
    }

    @Test
    void aStartBetweenTheTwoRenamesFinishesThem(@TempDir Path data) throws Exception {
        Path finished = Files.createDirectories(data.resolve("pg.upgrading"));
        Files.writeString(finished.resolve("PG_VERSION"), ClusterUpgrade.CURRENT + "\n");
        Files.writeString(finished.resolve("postgresql.conf"), "");
        Files.createDirectories(data.resolve("pg-14"));
        assertFalse(new ClusterUpgrade(data, PREVIOUS, CURRENT).needed());
        assertEquals(ClusterUpgrade.CURRENT, ClusterUpgrade.major(data.resolve("pg")));
        assertFalse(Files.exists(data.resolve("pg.upgrading")));
    }

    @Test
    void aClusterOfAMajorNoReleaseMadeIsRefusedWithWhatToDo(@TempDir Path data) throws Exception {
        Path pg = Files.createDirectories(data.resolve("pg"));
        Files.writeString(pg.resolve("PG_VERSION"), "16\n");
        Files.writeString(pg.resolve("postgresql.conf"), "");
        IOException refused =
                assertThrows(IOException.class, () -> new ClusterUpgrade(data, PREVIOUS, CURRENT).needed());
        assertTrue(refused.getMessage().contains("made by PostgreSQL 16"), refused.getMessage());
        assertFalse(
                new ClusterUpgrade(Files.createDirectories(data.resolve("fresh")), PREVIOUS, CURRENT).needed(),
                "a data directory without a cluster needs none");
    }

    private static EmbeddedPostgres start(Path pgData, PgBinaryResolver binaries) throws IOException {
        return fromTemplate(pgData, binaries).start();
    }

    /**
     * A builder for a server in {@code pgData}; a fresh cluster of {@link #PREVIOUS} is a copy of the class's template
     * once the first initdb made it.
     */
    private static EmbeddedPostgres.Builder fromTemplate(Path pgData, PgBinaryResolver binaries) throws IOException {
        Files.createDirectories(pgData);
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                .setPgBinaryResolver(binaries);
        if (binaries == PREVIOUS && ClusterUpgrade.major(pgData) == null && !previousTemplate.copyTo(pgData)) {
            builder.setDataDirectoryCustomizer(dir -> {
                try {
                    previousTemplate.keep(dir.toPath());
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        }
        return builder;
    }

    private static List<String> fingerprints(EmbeddedPostgres pg) throws SQLException {
        List<String> all = new ArrayList<>();
        try (Connection c = pg.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            for (String sql : FINGERPRINTS) {
                all.add(one(s, sql));
            }
        }
        return all;
    }

    private static String one(Statement s, String sql) throws SQLException {
        try (ResultSet r = s.executeQuery(sql)) {
            assertTrue(r.next(), sql);
            return r.getString(1);
        }
    }

    private static String state(Statement s, String sql) {
        SQLException e = assertThrows(SQLException.class, () -> s.execute(sql));
        return e.getSQLState();
    }
}
