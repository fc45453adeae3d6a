package dev.atrium.apps.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Session-level advisory locks that serialise changes of one group or rollout across every server on the database.
 * The lock's connection is held outside any transaction while the work runs on other connections, and a server that
 * dies releases its locks with its connections, so an apply cut short by {@code kill -9} never blocks the next one.
 */
final class Locks {

    private final DataSource dataSource;

    Locks(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Runs {@code work} holding the lock named {@code key}, waiting for it. */
    <T> T with(String key, Supplier<T> work) {
        return attempt(key, true, work).orElse(null);
    }

    /** Runs {@code work} holding the lock when it is free now; empty when another holds it. */
    <T> Optional<T> ifFree(String key, Supplier<T> work) {
        return attempt(key, false, work);
    }

    private <T> Optional<T> attempt(String key, boolean wait, Supplier<T> work) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (PreparedStatement s = c.prepareStatement(
                    wait
                            ? "SELECT pg_advisory_lock(hashtextextended(?, 7))"
                            : "SELECT pg_try_advisory_lock(hashtextextended(?, 7))")) {
                s.setString(1, key);
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    if (!wait && !rs.getBoolean(1)) {
                        return Optional.empty();
                    }
                }
            }
            try {
                return Optional.ofNullable(work.get());
            } finally {
                try (PreparedStatement s = c.prepareStatement("SELECT pg_advisory_unlock(hashtextextended(?, 7))")) {
                    s.setString(1, key);
                    s.execute();
                }
            }
        } catch (SQLException e) {
            throw dev.atrium.kernel.api.Sql.translate(e);
        }
    }
}
