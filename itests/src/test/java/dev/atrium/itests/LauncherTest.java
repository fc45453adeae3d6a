package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@code ./atrium run} with no database URL: a real embedded PostgreSQL in {@code <data>/pg}, stopped with the
 * server on SIGTERM, and the same data and operator token after a restart.
 */
class LauncherTest {

    @Test
    void runOnTheEmbeddedDatabaseServesKeepsDataAndStopsWithoutOrphans() throws Exception {
        Path data = Files.createTempDirectory("atrium-embedded-");
        List<AtriumServer> started = new ArrayList<>();
        try {
            AtriumServer first = startEmbedded(data, started);
            System.out.println("cold start to /healthz 200 on embedded PostgreSQL (first run, initdb): " + first.startMillis + " ms");
            assertTrue(Files.exists(data.resolve("pg/PG_VERSION")), "the database lives in <data>/pg");
            Path tokenFile = data.resolve("operator.token");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile)));
            String operator = Files.readString(tokenFile);
            AtriumServer.User u = first.newUser();
            String memory = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "survives restarts"))
                    .get("memory").get("id").asText();
            String token = u.http().get("/api/me").raw().request().headers().firstValue("Authorization").orElseThrow();
            assertEquals(200, first.operator().post("/admin/features/memories/disable", Map.of()).status());

            System.out.println("exit code after SIGTERM: " + first.stop());
            assertEquals(List.of(), postgresProcessesUsing(data), "no PostgreSQL is left running");
            assertFalse(first.fullLog().contains("terminating connection due to administrator command"),
                    "the embedded database stops after the capabilities using it, not beside them");

            AtriumServer second = startEmbedded(data, started);
            System.out.println("warm start to /healthz 200 on embedded PostgreSQL: " + second.startMillis + " ms");
            assertEquals(operator, Files.readString(tokenFile), "the operator token is kept");
            Http again = new Http(second.base(), token.substring("Bearer ".length()));
            Http.Reply stillDisabled = again.get("/api/memories/" + memory);
            assertEquals(404, stillDisabled.status(), "the disabled set is restored at start: " + stillDisabled.body());
            assertTrue(stillDisabled.body().contains("memories capability is disabled"), stillDisabled.body());
            assertEquals(200, second.operator().post("/admin/features/memories/enable", Map.of()).status());
            FeatureSwitchTest.await(again, "/api/memories/" + memory, 200);
            Http.Reply kept = again.get("/api/memories/" + memory);
            assertEquals(200, kept.status(), kept.body());
            assertEquals("survives restarts", kept.get("memory").get("content").asText());
            second.stop();
            assertEquals(List.of(), postgresProcessesUsing(data));
        } finally {
            for (AtriumServer s : started) {
                if (s.process.isAlive()) {
                    // the JVM too: while it writes its class-data archive the atrium script is its parent, and killing
                    // only the script left the JVM running
                    s.killHard();
                }
            }
            for (long pid : postgresProcessesUsing(data)) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            AtriumServer.deleteTree(data.toFile());
        }
    }

    private static AtriumServer startEmbedded(Path data, List<AtriumServer> started) throws Exception {
        AtriumServer server = AtriumServer.launch(data, null);
        started.add(server);
        return server;
    }

    /** PIDs of processes whose command line names {@code data} (postgres is started with {@code -D <data>/pg}). */
    static List<Long> postgresProcessesUsing(Path data) throws IOException {
        List<Long> pids = new ArrayList<>();
        String needle = data.toAbsolutePath().resolve("pg").toString();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                try {
                    String cmd = new String(Files.readAllBytes(proc.resolve("cmdline"))).replace('\0', ' ');
                    if (cmd.contains("postgres") && cmd.contains(needle)) {
                        pids.add(Long.parseLong(proc.getFileName().toString()));
                    }
                } catch (IOException gone) {
                    // the process ended while we looked
                }
            }
        }
        return pids;
    }
}
