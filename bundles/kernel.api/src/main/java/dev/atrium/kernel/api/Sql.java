package dev.atrium.kernel.api;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The one JDBC helper every bundle uses for the tables it owns: parameterised statements, row mapping, transactions,
 * and one policy for what a database failure tells the client ({@link #translate}). Ids come from {@link Ids}.
 *
 * <p>Every failure leaves through {@link #translate}: a unique violation is 409 ({@link Conflict}, which callers catch
 * to say what clashed), input PostgreSQL cannot store or compare is 400; a cancelled statement is 503, and so are a
 * lost or refused connection (SQLState class 08, 57P01-57P03: the server stopped or restarts) and a pool that had no
 * connection to give in time; anything else is a {@link DatabaseException} (500, logged by the kernel). A {@code String} parameter holding U+0000 is refused with
 * 400 before it is sent: PostgreSQL text cannot hold it, and no bundle may store it cut or changed.
 */
public final class Sql {

    @FunctionalInterface
    public interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    /**
     * Statements on one connection. The work of {@link #tx} may run more than once (a serialization failure or a
     * deadlock is retried), so it must not have effects outside the database that a second run would repeat.
     */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Statements whose rows are handed on as they are read (a workspace archive writing to a response): the handing on
     * may fail with an {@link IOException}.
     *
     * @since 2.18
     */
    @FunctionalInterface
    public interface Streaming<T> {
        T run(Connection c) throws SQLException, IOException;
    }

    /**
     * Where {@link Streaming} work hands each row it reads.
     *
     * @since 2.18
     */
    @FunctionalInterface
    public interface RowSink<T> {
        void accept(T row) throws IOException;
    }

    /** A failure of the database, not of the request: answered as 500 and logged. */
    public static final class DatabaseException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DatabaseException(SQLException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /**
     * A unique constraint refused a row: 409 {@code CONFLICT}. Callers that know what clashed catch it and throw
     * {@link ApiException#conflict} with a message that says so, choosing by {@link #constraint()} when a table has
     * several.
     */
    public static final class Conflict extends ApiException {
        private static final long serialVersionUID = 1L;

        private final String constraint;

        Conflict(String constraint) {
            super(409, "CONFLICT", "this conflicts with one that already exists");
            this.constraint = constraint;
        }

        /** The name of the unique constraint or index that refused the row ({@code ""} when the database did not say). */
        public String constraint() {
            return constraint;
        }
    }

    static final String UNREACHABLE = "the database is not reachable now; try again shortly";

    static final String NUL_MESSAGE = "text must not contain NUL (U+0000) characters";

    /** How often {@link #tx} runs work that failed with a serialization failure or a deadlock. */
    static final int TX_ATTEMPTS = 3;

    private final DataSource dataSource;

    public Sql(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public <T> List<T> list(String sql, Row<T> row, Object... args) {
        return run(c -> list(c, sql, row, args));
    }

    public <T> Optional<T> one(String sql, Row<T> row, Object... args) {
        return run(c -> one(c, sql, row, args));
    }

    public int update(String sql, Object... args) {
        return run(c -> update(c, sql, args));
    }

    /** The first column of the first row as a number ({@code count(*)} and the like); 0 when there is no row. */
    public long count(String sql, Object... args) {
        return run(c -> count(c, sql, args));
    }

    /** Runs {@code work} on one connection without a transaction (each statement commits on its own). */
    public <T> T run(Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    /**
     * Runs {@code work} in one transaction, committed when it returns and rolled back when it throws. A serialization
     * failure or a deadlock (SQLState 40001, 40P01) rolls back and runs it again, {@value #TX_ATTEMPTS} times at
     * most; after that it is 503.
     */
    public <T> T tx(Work<T> work) {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                try {
                    T result = work.run(c);
                    c.commit();
                    return result;
                } catch (SQLException | RuntimeException e) {
                    c.rollback();
                    throw e;
                } finally {
                    c.setAutoCommit(true);
                }
            } catch (SQLException e) {
                if (attempt >= TX_ATTEMPTS || !retryable(e)) {
                    throw translate(e);
                }
            }
        }
    }

    /**
     * Runs {@code work}'s reads in one snapshot (a read-only REPEATABLE READ transaction): statements that describe the
     * same rows together (a page and its total) agree, whatever commits meanwhile.
     *
     * @since 2.5
     */
    public <T> T snapshot(Work<T> work) {
        return tx(c -> {
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
            }
            return work.run(c);
        });
    }

    /**
     * {@link #snapshot} for work that hands on what it reads: it runs once, never again after a failure (rows handed
     * on cannot be taken back, where {@link #tx} would retry), and its {@link IOException} passes through as it is.
     *
     * @since 2.18
     */
    public <T> T snapshotStreaming(Streaming<T> work) throws IOException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (java.sql.Statement s = c.createStatement()) {
                    s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
                }
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | IOException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw translate(e);
        }
    }

    public static <T> List<T> list(Connection c, String sql, Row<T> row, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args);
                ResultSet rs = ps.executeQuery()) {
            List<T> out = new ArrayList<>();
            while (rs.next()) {
                out.add(row.map(rs));
            }
            return out;
        }
    }

    public static <T> Optional<T> one(Connection c, String sql, Row<T> row, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args);
                ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.ofNullable(row.map(rs)) : Optional.empty();
        }
    }

    public static int update(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args)) {
            return ps.executeUpdate();
        }
    }

    public static long count(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args);
                ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getLong(1) : 0L;
        }
    }

    /** Runs a statement whose results do not matter ({@code SELECT pg_notify(...)}, {@code LISTEN}). */
    public static void exec(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args)) {
            ps.execute();
        }
    }

    public static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

    /**
     * The exception a database failure is answered with, the same in every bundle. SQLStates (PostgreSQL's appendix A):
     * <ul>
     * <li>23505 unique violation: {@link Conflict}, 409 {@code CONFLICT};</li>
     * <li>23503 foreign-key violation: 409 {@code CONFLICT} (what the row refers to was removed meanwhile, or a row
     * still refers to what is being removed; the request raced another one, it did not name something unknown, which
     * the owner-scope check before the write would have answered 404);</li>
     * <li>22021, 22P05 (U+0000 or a byte sequence text cannot hold), 22001 and 54000 (a value too long for its column,
     * an index entry or a text search vector), 22P02, 22007 (malformed text of a number, date or other type), 22008,
     * 22003 (a date or a number out of range): 400 {@code BAD_REQUEST};</li>
     * <li>57014 (statement timeout, cancelled query), and 40001, 40P01 once {@link #tx} has given up retrying: 503
     * {@code SERVICE_UNAVAILABLE};</li>
     * <li>anything else: {@link DatabaseException}, 500.</li>
     * </ul>
     * The first SQLState that maps to a client answer anywhere in the chain of {@link SQLException#getNextException()}
     * decides (a batch reports its cause there).
     */
    public static RuntimeException translate(SQLException e) {
        if (e instanceof java.sql.SQLTransientConnectionException) {
            // the pool waited its time for a connection: the database is down or every connection is busy
            return ApiException.unavailable(UNREACHABLE);
        }
        for (SQLException s = e; s != null; s = s.getNextException()) {
            RuntimeException answer = answer(s);
            if (answer != null) {
                return answer;
            }
        }
        return new DatabaseException(e);
    }

    private static RuntimeException answer(SQLException e) {
        String state = e.getSQLState();
        if (state == null) {
            return null;
        }
        if (state.startsWith("08")) {
            return ApiException.unavailable(UNREACHABLE);
        }
        return switch (state) {
            case "57P01", "57P02", "57P03" -> ApiException.unavailable(UNREACHABLE);
            case "23505" -> new Conflict(constraintName(e.getMessage()));
            case "23503" -> ApiException.conflict("this refers to something that was removed, or is still referred to");
            case "22021", "22P05" -> ApiException.badRequest(NUL_MESSAGE);
            case "22001", "54000" -> ApiException.badRequest("a value is too long to be stored");
            case "22P02", "22007" -> ApiException.badRequest("a value is not valid for its type");
            case "22008" -> ApiException.badRequest("a date or time is out of range");
            case "22003" -> ApiException.badRequest("a number is out of range");
            case "57014", "40001", "40P01" ->
                ApiException.unavailable("the database could not finish in time; try again");
            default -> null;
        };
    }

    private static boolean retryable(SQLException e) {
        for (SQLException s = e; s != null; s = s.getNextException()) {
            if ("40001".equals(s.getSQLState()) || "40P01".equals(s.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    /** The quoted constraint name of PostgreSQL's "duplicate key value violates unique constraint "name"". */
    static String constraintName(String message) {
        if (message == null) {
            return "";
        }
        int open = message.indexOf('"');
        int close = open < 0 ? -1 : message.indexOf('"', open + 1);
        return close < 0 ? "" : message.substring(open + 1, close);
    }

    /** The earliest and latest instants PostgreSQL's timestamptz holds (4713 BC and 294276 AD). */
    private static final Instant EARLIEST = Instant.parse("-4713-11-24T00:00:00Z");

    private static final Instant LATEST = Instant.parse("+294276-12-31T23:59:59Z");

    private static PreparedStatement prepare(Connection c, String sql, Object... args) throws SQLException {
        for (Object a : args) {
            if (a instanceof String s && s.indexOf('\0') >= 0) {
                throw ApiException.badRequest(NUL_MESSAGE);
            }
            Instant t = a instanceof Instant i ? i : a instanceof Timestamp ts ? ts.toInstant() : null;
            if (t != null && (t.isBefore(EARLIEST) || t.isAfter(LATEST))) {
                throw ApiException.badRequest("a date or time is out of range");
            }
        }
        PreparedStatement ps = c.prepareStatement(sql);
        try {
            for (int i = 0; i < args.length; i++) {
                Object a = args[i];
                ps.setObject(i + 1, a instanceof Instant t ? Timestamp.from(t) : a);
            }
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
        return ps;
    }
}
