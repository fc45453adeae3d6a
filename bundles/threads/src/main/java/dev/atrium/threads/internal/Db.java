package dev.atrium.threads.internal;

import dev.atrium.kernel.api.NulText;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

/** Small JDBC helpers: one statement per call, parameters bound in order. */
final class Db {

    interface Row<T> {
        T map(ResultSet rs) throws SQLException;
    }

    private final DataSource dataSource;

    Db(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    <T> List<T> list(String sql, Row<T> row, Object... args) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                List<T> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(row.map(rs));
                }
                return out;
            }
        } catch (SQLException e) {
            throw NulText.failure(e);
        }
    }

    <T> Optional<T> one(String sql, Row<T> row, Object... args) {
        return list(sql, row, args).stream().findFirst();
    }

    int update(String sql, Object... args) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw NulText.failure(e);
        }
    }

    long count(String sql, Object... args) {
        return one(sql, rs -> rs.getLong(1), args).orElse(0L);
    }

    private static void bind(PreparedStatement ps, Object[] args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
    }
}
