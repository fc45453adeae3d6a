package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class SqlTest {

    private static ApiException answer(String sqlState) {
        return assertInstanceOf(ApiException.class, Sql.translate(new SQLException("refused", sqlState)));
    }

    @Test
    void eachSqlStateHasOneAnswer() {
        assertEquals(409, answer("23505").status());
        assertEquals("CONFLICT", answer("23505").code());
        assertEquals(409, answer("23503").status());
        for (String state : List.of("22021", "22P05", "22001", "54000", "22P02", "22007", "22008", "22003")) {
            assertEquals(400, answer(state).status(), state);
            assertEquals("BAD_REQUEST", answer(state).code(), state);
        }
        assertEquals(
                "text must not contain NUL (U+0000) characters", answer("22021").getMessage());
        assertEquals(
                "text must not contain NUL (U+0000) characters", answer("22P05").getMessage());
        for (String state : List.of("57014", "40001", "40P01")) {
            assertEquals(503, answer(state).status(), state);
            assertEquals("SERVICE_UNAVAILABLE", answer(state).code(), state);
        }
        assertInstanceOf(Sql.DatabaseException.class, Sql.translate(new SQLException("broken", "XX000")));
        assertInstanceOf(Sql.DatabaseException.class, Sql.translate(new SQLException("no state")));
    }

    @Test
    void aBatchFailureIsJudgedByTheCauseItChains() {
        SQLException batch = new SQLException("batch entry 0 was aborted", "XX000");
        batch.setNextException(new SQLException("invalid byte sequence for encoding \"UTF8\": 0x00", "22021"));
        assertEquals(
                400, assertInstanceOf(ApiException.class, Sql.translate(batch)).status());
    }

    @Test
    void aConflictNamesTheConstraintForCallersThatSayWhatClashed() {
        SQLException e = new SQLException(
                "ERROR: duplicate key value violates unique constraint \"repositories_one_default\"\n"
                        + "  Detail: Key (space_id)=(sp_1) already exists.",
                "23505");
        Sql.Conflict conflict = assertInstanceOf(Sql.Conflict.class, Sql.translate(e));
        assertEquals("repositories_one_default", conflict.constraint());
        assertEquals(
                "",
                assertInstanceOf(Sql.Conflict.class, Sql.translate(new SQLException(null, "23505")))
                        .constraint());
    }

    /** A connection that records what it was asked and fails every statement with {@code failure}'s next answer. */
    private static Connection connection(List<String> calls, java.util.function.Supplier<SQLException> failure) {
        return (Connection) Proxy.newProxyInstance(
                SqlTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                    calls.add(m.getName());
                    return switch (m.getName()) {
                        case "prepareStatement" -> throw failure.get();
                        case "getAutoCommit" -> true;
                        default -> null;
                    };
                });
    }

    private static DataSource dataSource(Connection c) {
        return (DataSource) Proxy.newProxyInstance(
                SqlTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, m, args) -> m.getName().equals("getConnection") ? c : null);
    }

    @Test
    void aNulOrAnInstantPostgreSqlCannotHoldIsRefusedBeforeTheStatementIsSent() {
        List<String> calls = new ArrayList<>();
        Sql sql = new Sql(dataSource(connection(calls, () -> new SQLException("must not be reached", "XX000"))));
        ApiException nul =
                assertThrows(ApiException.class, () -> sql.update("UPDATE t SET v = ? WHERE id = ?", "a\0b", "id"));
        assertEquals(400, nul.status());
        assertEquals("text must not contain NUL (U+0000) characters", nul.getMessage());
        ApiException far = assertThrows(
                ApiException.class, () -> sql.update("UPDATE t SET at = ?", Instant.parse("+300000-01-01T00:00:00Z")));
        assertEquals(400, far.status());
        assertEquals(false, calls.contains("prepareStatement"));
    }

    @Test
    void aTransactionThatLostASerializationRaceRunsAgainAFewTimesThen503() {
        List<String> calls = new ArrayList<>();
        Sql sql = new Sql(dataSource(connection(calls, () -> new SQLException("could not serialize access", "40001"))));
        AtomicInteger runs = new AtomicInteger();
        ApiException e = assertThrows(
                ApiException.class,
                () -> sql.tx(c -> {
                    runs.incrementAndGet();
                    return Sql.update(c, "UPDATE t SET v = 1");
                }));
        assertEquals(503, e.status());
        assertEquals(Sql.TX_ATTEMPTS, runs.get());
        assertEquals(Sql.TX_ATTEMPTS, calls.stream().filter("rollback"::equals).count());

        AtomicInteger attempts = new AtomicInteger();
        Sql flaky = new Sql(
                dataSource(connection(new ArrayList<>(), () -> new SQLException("deadlock detected", "40P01"))));
        assertEquals(
                "done",
                flaky.tx(c ->
                        attempts.incrementAndGet() < 2 ? String.valueOf(Sql.update(c, "UPDATE t SET v = 1")) : "done"));
        assertEquals(2, attempts.get());
    }

    @Test
    void anyOtherFailureIsNotRetried() {
        List<String> calls = new ArrayList<>();
        Sql sql = new Sql(dataSource(connection(calls, () -> new SQLException("unique", "23505"))));
        AtomicInteger runs = new AtomicInteger();
        assertThrows(
                Sql.Conflict.class,
                () -> sql.tx(c -> {
                    runs.incrementAndGet();
                    return Sql.update(c, "INSERT INTO t VALUES (1)");
                }));
        assertEquals(1, runs.get());
    }

    @Test
    void streamingWorkReadsOneSnapshotRunsOnceAndItsIOExceptionPassesThrough() throws Exception {
        try (TestPostgres pg = TestPostgres.create("sqlstream")) {
            Sql sql = new Sql(pg.dataSource());
            sql.update("CREATE TABLE t (id int PRIMARY KEY)");
            sql.update("INSERT INTO t SELECT generate_series(1, 3)");
            List<Integer> seen = new ArrayList<>();
            long n = sql.snapshotStreaming(c -> {
                for (Integer id : Sql.list(c, "SELECT id FROM t ORDER BY id", rs -> rs.getInt(1))) {
                    seen.add(id);
                }
                // committed elsewhere meanwhile: the snapshot does not see it
                sql.update("INSERT INTO t VALUES (4)");
                return Sql.count(c, "SELECT count(*) FROM t");
            });
            assertEquals(List.of(1, 2, 3), seen);
            assertEquals(3, n);

            AtomicInteger runs = new AtomicInteger();
            java.io.IOException gone = new java.io.IOException("the client went away");
            java.io.IOException thrown = assertThrows(
                    java.io.IOException.class,
                    () -> sql.snapshotStreaming(c -> {
                        runs.incrementAndGet();
                        throw gone;
                    }));
            assertEquals(gone, thrown);
            assertEquals(1, runs.get());
            // read only: a write inside is refused, and it is not retried either
            assertThrows(
                    RuntimeException.class,
                    () -> sql.snapshotStreaming(c -> {
                        runs.incrementAndGet();
                        return Sql.update(c, "INSERT INTO t VALUES (5)");
                    }));
            assertEquals(2, runs.get());
        }
    }
}
