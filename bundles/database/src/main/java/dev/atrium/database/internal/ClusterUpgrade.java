package dev.atrium.database.internal;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves an embedded cluster made by the previous PostgreSQL major (14, which reached its end of life in November 2026)
 * to the current one. A data directory's files are readable only by the major that wrote them, and the embedded
 * binaries have no pg_upgrade, so the old cluster is started on the previous binaries this bundle still carries, copied
 * database by database into a new cluster ({@link LogicalCopy}), and both are stopped.
 * <p>
 * Nothing is lost on any path: the new cluster is made beside the old one ({@code pg.upgrading}); only once every
 * database is copied and counted does the old one move aside ({@code pg-14}, kept until the operator removes it) and
 * the new one take its place. A failed or interrupted copy leaves the old cluster where it was, the next start tries
 * again, and a start between the two renames finishes them.
 */
final class ClusterUpgrade {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterUpgrade.class);

    /** The major of the binaries the server runs on ({@code PG_VERSION} of a cluster they make). */
    static final String CURRENT = "18";
    /** The major an upgrade starts from: what every earlier release made. */
    static final String PREVIOUS = "14";
    /** This bundle's resource with the previous major's binaries (see the pom). */
    static final String PREVIOUS_BINARIES = "/postgres-previous/postgres-linux-x86_64.txz";

    private final Path data;
    private final PgBinaryResolver previous;
    private final PgBinaryResolver current;

    /**
     * @param data     the data directory, whose {@code pg/} holds the cluster
     * @param previous the binaries of {@link #PREVIOUS}
     * @param current  the binaries of {@link #CURRENT}
     */
    ClusterUpgrade(Path data, PgBinaryResolver previous, PgBinaryResolver current) {
        this.data = data;
        this.previous = previous;
        this.current = current;
    }

    /** The major that made the cluster in {@code pgData}, or null when there is none. */
    static String major(Path pgData) throws IOException {
        Path version = pgData.resolve("PG_VERSION");
        if (!Files.isRegularFile(version) || !Files.isRegularFile(pgData.resolve("postgresql.conf"))) {
            return null;
        }
        return Files.readString(version, StandardCharsets.US_ASCII).trim();
    }

    /** Whether the cluster in {@code <data>/pg} needs this upgrade; refuses one no release of Atrium made. */
    boolean needed() throws IOException {
        finishInterrupted();
        String major = major(cluster());
        if (major == null || CURRENT.equals(major)) {
            return false;
        }
        if (!PREVIOUS.equals(major)) {
            throw new IOException("the embedded database in " + cluster() + " was made by PostgreSQL " + major
                    + "; this"
                    + " server runs PostgreSQL " + CURRENT + " and upgrades only clusters of PostgreSQL " + PREVIOUS
                    + ". Start it with a server of the release that made it, or move the directory away.");
        }
        return true;
    }

    /** Copies the old cluster into a new one and swaps them; the old one is kept and returned. */
    Path upgrade() throws IOException {
        long started = System.nanoTime();
        Path next = data.resolve("pg.upgrading");
        if (Files.exists(next)) {
            LOG.info("removing {}, left by an upgrade that did not finish", next);
            ClusterTemplate.emptyQuietly(next);
        }
        Files.createDirectories(next);
        LOG.info(
                "upgrading the embedded database in {} from PostgreSQL {} to {}; the old cluster is kept",
                cluster(),
                PREVIOUS,
                CURRENT);
        long rows;
        try (EmbeddedPostgres old = start(cluster(), previous);
                EmbeddedPostgres fresh = start(next, current)) {
            rows = copy(old, fresh);
        } catch (SQLException | IOException | RuntimeException e) {
            ClusterTemplate.emptyQuietly(next);
            Files.deleteIfExists(next);
            throw new IOException(
                    "the embedded database could not be upgraded from PostgreSQL " + PREVIOUS + " to " + CURRENT
                            + ", and is left as it was in " + cluster() + ": " + e.getMessage(),
                    e);
        }
        Path kept = keptName();
        Files.move(cluster(), kept, StandardCopyOption.ATOMIC_MOVE);
        Files.move(next, cluster(), StandardCopyOption.ATOMIC_MOVE);
        LOG.info(
                "upgraded the embedded database to PostgreSQL {} in {} ms ({} rows); the PostgreSQL {} cluster is kept in"
                        + " {} until you remove it",
                CURRENT,
                (System.nanoTime() - started) / 1_000_000,
                rows,
                PREVIOUS,
                kept);
        return kept;
    }

    /** A start between the upgrade's two renames finds no {@code pg/} but a finished new cluster: it takes its place. */
    private void finishInterrupted() throws IOException {
        Path next = data.resolve("pg.upgrading");
        // the old cluster moves aside only once the copy is whole, so a new one without an old one is a finished copy
        if (!Files.exists(cluster()) && CURRENT.equals(major(next))) {
            Files.move(next, cluster(), StandardCopyOption.ATOMIC_MOVE);
            LOG.info(
                    "finished an upgrade to PostgreSQL {} interrupted before its new cluster took the place of the old",
                    CURRENT);
        }
    }

    private Path cluster() {
        return data.resolve("pg");
    }

    private Path keptName() {
        Path kept = data.resolve("pg-" + PREVIOUS);
        for (int i = 2; Files.exists(kept); i++) {
            kept = data.resolve("pg-" + PREVIOUS + "." + i);
        }
        return kept;
    }

    private static EmbeddedPostgres start(Path pgData, PgBinaryResolver binaries) throws IOException {
        return EmbeddedPostgres.builder()
                // not zonky's own choice, which an outgoing connection can take before PostgreSQL binds it
                .setPort(EmbeddedStarts.port())
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                // a server stopped while it upgrades stops these too; the next start finds the old cluster as it was
                .setRegisterShutdownHook(true)
                .setPgBinaryResolver(binaries)
                .start();
    }

    /** Copies every database, refusing before anything is written when one holds what the copy does not carry. */
    private static long copy(EmbeddedPostgres old, EmbeddedPostgres fresh) throws SQLException {
        List<String[]> databases = new ArrayList<>();
        try (Connection c = old.getPostgresDatabase().getConnection();
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(
                        "SELECT datname, pg_encoding_to_char(encoding), datcollate, datctype"
                                + " FROM pg_database WHERE NOT datistemplate AND datallowconn ORDER BY datname = 'postgres' DESC, datname")) {
            while (r.next()) {
                databases.add(new String[] {r.getString(1), r.getString(2), r.getString(3), r.getString(4)});
            }
        }
        for (String[] database : databases) {
            try (Connection from = old.getDatabase("postgres", database[0]).getConnection()) {
                new LogicalCopy(from, null).refuseWhatIsNotCopied("the database " + database[0]);
            }
        }
        long rows = 0;
        for (String[] database : databases) {
            if (!"postgres".equals(database[0])) {
                try (Connection c = fresh.getPostgresDatabase().getConnection();
                        Statement s = c.createStatement()) {
                    s.execute("CREATE DATABASE " + quoted(database[0]) + " TEMPLATE template0 ENCODING '" + database[1]
                            + "' LC_COLLATE '" + database[2].replace("'", "''") + "' LC_CTYPE '"
                            + database[3].replace("'", "''") + "'");
                }
            }
            try (Connection from = old.getDatabase("postgres", database[0]).getConnection();
                    Connection to = fresh.getDatabase("postgres", database[0]).getConnection()) {
                rows += new LogicalCopy(from, to).copy();
                to.setAutoCommit(true);
                try (Statement s = to.createStatement()) {
                    // the planner's statistics are not copied; without them the first queries plan blind
                    s.execute("ANALYZE");
                }
            }
        }
        return rows;
    }

    private static String quoted(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }
}
