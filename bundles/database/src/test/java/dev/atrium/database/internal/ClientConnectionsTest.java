package dev.atrium.database.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On a real embedded PostgreSQL: the clients its stop waits for are the open connections, and only those. */
class ClientConnectionsTest {

    @Test
    void anOpenConnectionIsWaitedForAndAClosedOneIsNot(@TempDir Path data) throws Exception {
        Path pgData = data.resolve("pg");
        Files.createDirectories(pgData);
        try (EmbeddedPostgres pg = Database.startServer(pgData.toFile(), null)) {
            // zonky checks the server is ready with a connection it closes at once; its backend ends a moment later
            // (seen once in a full suite as "postgres postgres 127.0.0.1(44702) idle" right after the start)
            assertEquals(
                    List.of(),
                    ClientConnections.awaitNone(pgData, 5_000),
                    "the server's own processes are not clients");
            Connection open = pg.getPostgresDatabase().getConnection();
            List<String> left = ClientConnections.awaitNone(pgData, 300);
            assertEquals(1, left.size(), left.toString());
            assertTrue(left.get(0).contains("127.0.0.1("), left.get(0));

            open.close();
            assertEquals(
                    List.of(), ClientConnections.awaitNone(pgData, 5_000), "a closed connection ends in the server");
        }
        assertEquals(List.of(), ClientConnections.of(pgData), "no server, no clients");
    }
}
