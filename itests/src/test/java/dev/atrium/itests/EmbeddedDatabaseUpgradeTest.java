package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A data directory whose embedded database every earlier release made on PostgreSQL 14 (end of life in November 2026)
 * starts on PostgreSQL 18 with its data: the server upgrades the cluster once and keeps the old one.
 */
class EmbeddedDatabaseUpgradeTest {

    @Test
    void aDataDirectoryMadeOnPostgres14StartsOnTheCurrentMajorWithItsData() throws Exception {
        Path data = Files.createTempDirectory("atrium-upgrade-");
        List<AtriumServer> started = new ArrayList<>();
        try {
            AtriumServer.User u;
            String memory;
            String operator;
            // today's release on the cluster it made: the same server, its schema and rows in <data>/pg's database
            // postgres
            try (TestDatabase pg14 = TestDatabase.previousMajorCluster(data.resolve("pg"))) {
                AtriumServer before = AtriumServer.launchAsShipped(data, pg14, Map.of());
                started.add(before);
                u = before.newUser();
                Http.Reply created = u.http()
                        .post(
                                "/api/spaces/" + u.defaultSpaceId() + "/memories",
                                Map.of("content", "kept across the upgrade: é, 😀, a\ttab"));
                assertEquals(201, created.status(), created.body());
                memory = created.get("memory").get("id").asText();
                operator = Files.readString(data.resolve("operator.token"));
                before.stop();
            }
            assertEquals("14", Files.readString(data.resolve("pg/PG_VERSION")).trim());

            AtriumServer after = AtriumServer.launchAsShipped(data, null, Map.of());
            started.add(after);
            String log = after.fullLog();
            assertTrue(log.contains("upgraded the embedded database to PostgreSQL 18"), log);
            assertEquals("18", Files.readString(data.resolve("pg/PG_VERSION")).trim());
            assertEquals(
                    "14", Files.readString(data.resolve("pg-14/PG_VERSION")).trim(), "the old cluster is kept");

            Http http = new Http(after.base(), tokenOf(u));
            Http.Reply kept = http.get("/api/memories/" + memory);
            assertEquals(200, kept.status(), "the user's token, space and memory are there: " + kept.body());
            assertEquals(
                    "kept across the upgrade: é, 😀, a\ttab",
                    kept.get("memory").get("content").asText());
            assertEquals(
                    201,
                    http.post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "new"))
                            .status(),
                    "ids continue where they were");
            assertEquals(operator, Files.readString(data.resolve("operator.token")));
            after.stop();
            assertEquals(
                    List.of(), LauncherTest.postgresProcessesUsing(data), "no PostgreSQL left running, old or new");

            AtriumServer again = AtriumServer.launchAsShipped(data, null, Map.of());
            started.add(again);
            assertTrue(!again.fullLog().contains("upgrading the embedded database"), "upgraded once");
            assertEquals(
                    200,
                    new Http(again.base(), tokenOf(u))
                            .get("/api/memories/" + memory)
                            .status());
            again.stop();
        } finally {
            LauncherTest.killAndRemove(started, data);
        }
    }

    private static String tokenOf(AtriumServer.User u) {
        return u.http().token();
    }
}
