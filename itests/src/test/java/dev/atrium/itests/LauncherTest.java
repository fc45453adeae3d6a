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
        // a temporary directory of its own, to see what the first server leaves there
        Path tmp = Files.createTempDirectory("atrium-embedded-tmp-");
        List<AtriumServer> started = new ArrayList<>();
        try {
            AtriumServer first =
                    startEmbedded(data, Map.of("ATRIUM_JAVA_EXTRA_OPTS", "-Djava.io.tmpdir=" + tmp), started);
            System.out.println("cold start to /healthz 200 on embedded PostgreSQL (first run, initdb): "
                    + first.startMillis + " ms");
            assertTrue(Files.exists(data.resolve("pg/PG_VERSION")), "the database lives in <data>/pg");
            assertBundlesInstalledByReference(data.resolve("felix-cache"));
            Path tokenFile = data.resolve("operator.token");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile)));
            String operator = Files.readString(tokenFile);
            AtriumServer.User u = first.newUser();
            String memory = u.http()
                    .post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "survives restarts"))
                    .get("memory")
                    .get("id")
                    .asText();
            String token = u.http()
                    .get("/api/me")
                    .raw()
                    .request()
                    .headers()
                    .firstValue("Authorization")
                    .orElseThrow();
            assertEquals(
                    200,
                    first.operator()
                            .post("/admin/features/memories/disable", Map.of())
                            .status());

            System.out.println("exit code after SIGTERM: " + first.stop());
            assertEquals(List.of(), postgresProcessesUsing(data), "no PostgreSQL is left running");
            assertFalse(
                    first.fullLog().contains("terminating connection due to administrator command"),
                    "the embedded database stops after the capabilities using it, not beside them:\n"
                            + around(first.fullLog(), "terminating connection due to administrator command"));
            try (var left = Files.list(tmp)) {
                // zonky's cache of the PostgreSQL binaries and the cluster template stay; e.g. the empty
                // detect_linux_distribution_*.sh zonky left at every start while the bundle lacked its script must not
                assertEquals(
                        List.of(),
                        left.map(p -> p.getFileName().toString())
                                .filter(n -> !n.equals("embedded-pg"))
                                .sorted()
                                .toList(),
                        "a start and stop leave nothing in the server's temporary directory");
            }

            AtriumServer second = startEmbedded(data, started);
            System.out.println("warm start to /healthz 200 on embedded PostgreSQL: " + second.startMillis + " ms");
            assertEquals(operator, Files.readString(tokenFile), "the operator token is kept");
            Http again = new Http(second.base(), token.substring("Bearer ".length()));
            Http.Reply stillDisabled = again.get("/api/memories/" + memory);
            assertEquals(404, stillDisabled.status(), "the disabled set is restored at start: " + stillDisabled.body());
            assertTrue(stillDisabled.body().contains("memories capability is disabled"), stillDisabled.body());
            assertEquals(
                    200,
                    second.operator()
                            .post("/admin/features/memories/enable", Map.of())
                            .status());
            FeatureSwitchTest.await(again, "/api/memories/" + memory, 200);
            Http.Reply kept = again.get("/api/memories/" + memory);
            assertEquals(200, kept.status(), kept.body());
            assertEquals("survives restarts", kept.get("memory").get("content").asText());
            second.stop();
            assertEquals(List.of(), postgresProcessesUsing(data));
        } finally {
            killAndRemove(started, data);
            AtriumServer.deleteTree(tmp.toFile());
        }
    }

    /** The log lines before and at each line containing {@code what}: what the server did as it happened. */
    static String around(String log, String what) {
        List<String> lines = log.lines().toList();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(what)) {
                lines.subList(Math.max(0, i - 15), i + 1)
                        .forEach(l -> out.append(l).append('\n'));
                out.append("...\n");
            }
        }
        return out.toString();
    }

    @Test
    void aFreshDataDirectoryStartsFromAPristineClusterTemplate() throws Exception {
        Path root = Files.createTempDirectory("atrium-templates-");
        Map<String, String> env = Map.of("ATRIUM_DB_CLUSTER_TEMPLATES", root.toString());
        List<Path> dirs = new ArrayList<>();
        List<AtriumServer> started = new ArrayList<>();
        try {
            // the first fresh start runs initdb and keeps the cluster as initdb left it, before any Atrium data
            AtriumServer first = startQuick(fresh(dirs), env, started);
            AtriumServer.User u = first.newUser();
            assertEquals(
                    201,
                    u.http()
                            .post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "mine"))
                            .status());
            first.stop();
            List<Path> templates;
            try (var listed = Files.list(root)) {
                templates = listed.toList();
            }
            assertEquals(1, templates.size(), "one template, no partial copy left: " + templates);
            Path template = templates.get(0);
            assertTrue(
                    Files.exists(template.resolve("PG_VERSION"))
                            && !Files.exists(template.resolve("epg-lock"))
                            && !Files.exists(template.resolve("postmaster.pid")),
                    "a pristine cluster");
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(template)));
            assertFalse(first.fullLog().contains("a copy of the cluster template"), first.fullLog());

            // the next fresh start copies it: no initdb, none of the first server's data
            AtriumServer second = startQuick(fresh(dirs), env, started);
            assertTrue(second.fullLog().contains("a copy of the cluster template"), second.fullLog());
            AtriumServer.User other = second.newUser();
            Http.Reply mine = other.http().get("/api/spaces/" + other.defaultSpaceId() + "/memories");
            assertEquals(200, mine.status(), mine.body());
            assertFalse(mine.body().contains("\"mine\""), "the copy holds nothing of another server: " + mine.body());
            second.stop();
            assertEquals(List.of(), postgresProcessesUsing(dirs.get(1)));

            // a template the server cannot start from is discarded and initdb runs as before
            Files.writeString(template.resolve("PG_VERSION"), "9\n");
            AtriumServer third = startQuick(fresh(dirs), env, started);
            assertTrue(third.fullLog().contains("did not start from the cluster template"), third.fullLog());
            third.newUser();
            third.stop();
            assertFalse(Files.exists(template), "the bad template is gone");
        } finally {
            for (AtriumServer s : started) {
                if (s.process.isAlive()) {
                    s.killHard();
                }
            }
            for (Path d : dirs) {
                for (long pid : postgresProcessesUsing(d)) {
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                }
                AtriumServer.deleteTree(d.toFile());
            }
            AtriumServer.deleteTree(root.toFile());
        }
    }

    private static Path fresh(List<Path> dirs) throws IOException {
        Path d = Files.createTempDirectory("atrium-embedded-");
        dirs.add(d);
        return d;
    }

    private static AtriumServer startEmbedded(Path data, Map<String, String> env, List<AtriumServer> started)
            throws Exception {
        AtriumServer server = AtriumServer.launchAsShipped(data, null, env);
        started.add(server);
        return server;
    }

    /**
     * As {@link #startEmbedded(Path, Map, List)}, compiling with C1 alone ({@link AtriumServer#launch}): for starts
     * whose figures nobody reads, so the cluster template's three starts spend no C2 time on the two shared cores.
     */
    private static AtriumServer startQuick(Path data, Map<String, String> env, List<AtriumServer> started)
            throws Exception {
        AtriumServer server = AtriumServer.launch(data, null, env);
        started.add(server);
        return server;
    }

    private static AtriumServer startEmbedded(Path data, List<AtriumServer> started) throws Exception {
        AtriumServer server = AtriumServer.launchAsShipped(data, null, Map.of());
        started.add(server);
        return server;
    }

    /** Kills what a test on an embedded database left running (its servers' JVMs, its PostgreSQL) and removes {@code data}. */
    static void killAndRemove(List<AtriumServer> started, Path data) throws Exception {
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

    /** PIDs of processes whose command line names {@code data} (postgres is started with {@code -D <data>/pg}). */
    static List<Long> postgresProcessesUsing(Path data) throws IOException {
        List<Long> pids = new ArrayList<>();
        String needle = data.toAbsolutePath().resolve("pg").toString();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .toList()) {
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

    /**
     * The framework storage holds no copies of the bundles: they are installed by reference from the expanded jar
     * (docs/decisions/runtime-and-build.md), every one of them.
     */
    private static void assertBundlesInstalledByReference(Path storage) throws java.io.IOException {
        List<String> locations;
        try (var files = Files.walk(storage)) {
            locations = files.filter(f -> f.getFileName().toString().equals("revision.location"))
                    .map(f -> {
                        try {
                            return Files.readString(f).trim();
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    })
                    .toList();
        }
        assertTrue(locations.size() > 100, "every bundle has a revision: " + locations.size());
        assertEquals(
                List.of(),
                locations.stream().filter(l -> !l.startsWith("reference:file:")).toList(),
                "bundles copied into the framework storage");
        try (var files = Files.walk(storage)) {
            long bytes = files.filter(Files::isRegularFile)
                    .mapToLong(f -> f.toFile().length())
                    .sum();
            assertTrue(bytes < 20_000_000, "the framework storage holds " + bytes + " bytes");
        }
    }
}
