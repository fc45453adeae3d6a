package dev.atrium.apps.internal;

import dev.atrium.kernel.api.ApiException;
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
 * A waiter holds no connection: it tries again every 200 ms, and gives up with 409 after {@link #WAIT_MILLIS}.
 */
final class Locks {

    static final long WAIT_MILLIS = 30_000;

    private final DataSource dataSource;

    Locks(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Runs {@code work} holding the lock named {@code key}, waiting for it (bounded). */
    <T> T with(String key, Supplier<T> work) {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (true) {
            Optional<Optional<T>> done = attempt(key, work);
            if (done.isPresent()) {
                return done.get().orElse(null);
            }
            if (System.currentTimeMillis() > deadline) {
                throw ApiException.conflict("another change of this group or rollout is still running; try again");
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiException.unavailable("interrupted while waiting for another change to end");
            }
        }
    }

    /** Runs {@code work} holding the lock when it is free now; empty when another holds it. */
    <T> Optional<T> ifFree(String key, Supplier<T> work) {
        return attempt(key, work).flatMap(r -> r);
    }

    /** Empty when another holds the lock; else what {@code work} returned (itself empty for null). */
    private <T> Optional<Optional<T>> attempt(String key, Supplier<T> work) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (PreparedStatement s = c.prepareStatement("SELECT pg_try_advisory_lock(hashtextextended(?, 7))")) {
                s.setString(1, key);
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    if (!rs.getBoolean(1)) {
                        return Optional.empty();
                    }
                }
            }
            try {
                return Optional.of(Optional.ofNullable(work.get()));
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
