package dev.atrium.kernel.api;

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
 * Thin JDBC helper for the tables a bundle owns: parameterised statements, row mapping and transactions, nothing
 * more. Shared so that capabilities do not each carry a copy.
 */
public final class Sql {

    @FunctionalInterface
    public interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    @FunctionalInterface
    public interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    /** A failure of the database, not of the request: answered as 500 and logged. */
    public static final class DatabaseException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DatabaseException(SQLException cause) {
            super(cause.getMessage(), cause);
        }

    }

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

    /** Runs {@code work} on one connection without a transaction. */
    public <T> T run(Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return work.run(c);
        } catch (SQLException e) {
            throw new DatabaseException(e);
        }
    }

    /** Runs {@code work} in one transaction, committed when it returns and rolled back when it throws. */
    public <T> T tx(Work<T> work) {
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
            throw new DatabaseException(e);
        }
    }

    public static <T> List<T> list(Connection c, String sql, Row<T> row, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args); ResultSet rs = ps.executeQuery()) {
            List<T> out = new ArrayList<>();
            while (rs.next()) {
                out.add(row.map(rs));
            }
            return out;
        }
    }

    public static <T> Optional<T> one(Connection c, String sql, Row<T> row, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args); ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.ofNullable(row.map(rs)) : Optional.empty();
        }
    }

    public static int update(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = prepare(c, sql, args)) {
            return ps.executeUpdate();
        }
    }

    public static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

    private static PreparedStatement prepare(Connection c, String sql, Object... args) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < args.length; i++) {
            Object a = args[i];
            ps.setObject(i + 1, a instanceof Instant t ? Timestamp.from(t) : a);
        }
        return ps;
    }
}
