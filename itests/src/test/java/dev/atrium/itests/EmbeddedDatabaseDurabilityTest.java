package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What the embedded database answered as stored stays stored when PostgreSQL and the server die at once (an OOM kill,
 * a power cut): a commit is flushed before it is answered, which the embedded library's default for tests does not do.
 */
class EmbeddedDatabaseDurabilityTest {

    @Test
    void aWriteAnsweredJustBeforePostgresAndTheServerAreKilledIsThereAfterARestart() throws Exception {
        Path data = Files.createTempDirectory("atrium-durable-");
        List<AtriumServer> started = new ArrayList<>();
        try {
            AtriumServer first = AtriumServer.launchAsShipped(data, null, Map.of());
            started.add(first);
            Matcher port = Pattern.compile("database ready \\(embedded, port (\\d+)\\)")
                    .matcher(first.fullLog());
            assertTrue(port.find(), first.fullLog());
            try (Connection c = DriverManager.getConnection(
                            "jdbc:postgresql://127.0.0.1:" + port.group(1) + "/postgres?user=postgres");
                    Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SHOW synchronous_commit")) {
                r.next();
                assertEquals("on", r.getString(1), "a commit is answered once its WAL is flushed");
            }
            AtriumServer.User u = first.newUser();
            List<String> memories = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                Http.Reply created = u.http()
                        .post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "durable " + i));
                assertEquals(201, created.status(), created.body());
                memories.add(created.get("memory").get("id").asText());
            }
            // at once after the last 201: postgres first (postmaster and backends), then the JVM
            for (long pid : LauncherTest.postgresProcessesUsing(data)) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            first.killHard();

            AtriumServer second = AtriumServer.launchAsShipped(data, null, Map.of());
            started.add(second);
            Http again = new Http(second.base(), u.http().token());
            for (String memory : memories) {
                Http.Reply kept = again.get("/api/memories/" + memory);
                assertEquals(200, kept.status(), memory + " was answered 201 before the crash: " + kept.body());
            }
            second.stop();
        } finally {
            LauncherTest.killAndRemove(started, data);
        }
    }
}
