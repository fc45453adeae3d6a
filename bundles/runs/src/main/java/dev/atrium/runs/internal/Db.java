package dev.atrium.runs.internal;

import dev.atrium.kernel.api.NulText;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

/** Small JDBC helpers: one statement per call or one transaction, parameters bound in order. */
final class Db {

    interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    final DataSource dataSource;

    Db(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    <T> List<T> list(String sql, Row<T> row, Object... args) {
        try (Connection c = dataSource.getConnection()) {
            return list(c, sql, row, args);
        } catch (SQLException e) {
            throw NulText.failure(e);
        }
    }

    static <T> List<T> list(Connection c, String sql, Row<T> row, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                List<T> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(row.map(rs));
                }
                return out;
            }
        }
    }

    <T> Optional<T> one(String sql, Row<T> row, Object... args) {
        return list(sql, row, args).stream().findFirst();
    }

    int update(String sql, Object... args) {
        try (Connection c = dataSource.getConnection()) {
            return update(c, sql, args);
        } catch (SQLException e) {
            throw NulText.failure(e);
        }
    }

    static int update(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            return ps.executeUpdate();
        }
    }

    static void exec(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            ps.execute();
        }
    }

    <T> T tx(Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean auto = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                T t = work.run(c);
                c.commit();
                return t;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(auto);
            }
        } catch (SQLException e) {
            throw NulText.failure(e);
        }
    }

    private static void bind(PreparedStatement ps, Object[] args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
    }
}
