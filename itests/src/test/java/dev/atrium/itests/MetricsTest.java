package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /metrics} (issue 41): the operator's figures in the Prometheus text format, checked by Prometheus's own
 * parser and linter ({@code promtool check metrics}, which {@code ./atrium test} provides), with every family the issue
 * names, and a route's counter that moves with the requests it serves.
 */
@SharedServer
class MetricsTest {

    /** The families the issue names, one of each at least (histograms by their _count series). */
    static final List<String> FAMILIES = List.of(
            "http_server_requests_seconds_count",
            "atrium_update_gate_holds_total",
            "atrium_jaxrs_rebuilds_total",
            "atrium_update_gate_held_requests_total",
            "atrium_db_pool_connections_active",
            "atrium_db_pool_connections_idle",
            "atrium_db_pool_connections_waiting",
            "atrium_db_pool_connection_timeouts_total",
            "atrium_db_listener_reconnects_total",
            "atrium_stream_subscribers",
            "atrium_git_pack_seconds_count",
            "atrium_git_pack_bytes_total",
            "atrium_workerd_processes",
            "atrium_workerd_restarts_total",
            "atrium_containers_running",
            "atrium_containers_restarts_total",
            "atrium_actions_jobs_queued",
            "jvm_memory_used_bytes",
            "jvm_gc_pause_seconds_count",
            "jvm_threads_live_threads",
            "process_cpu_seconds_total",
            "process_resident_memory_bytes",
            "process_files_open_files");

    @Test
    void metricsAreTheOperatorsOnly(AtriumServer server) {
        Http.Reply anonymous = server.anonymous().get("/metrics");
        assertEquals(401, anonymous.status(), anonymous.body());
        assertEquals("UNAUTHORIZED", anonymous.errorCode());
        Http.Reply user = server.newUser().http().get("/metrics");
        assertEquals(401, user.status(), user.body());
        Http.Reply operator = server.operator().get("/metrics");
        assertEquals(200, operator.status(), operator.body());
        assertTrue(
                operator.raw().headers().firstValue("Content-Type").orElse("").startsWith("text/plain"),
                operator.raw().headers().toString());
    }

    @Test
    void aRequestToARouteMovesItsCounterByRouteTemplate(AtriumServer server) {
        AtriumServer.User u = server.newUser();
        String series = "http_server_requests_seconds_count{capability=\"memories\",method=\"POST\","
                + "route=\"/api/spaces/{spaceId}/memories\",status=\"2xx\"}";
        double before = value(server.operator().get("/metrics").body(), series);
        for (int i = 0; i < 3; i++) {
            Http.Reply r = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "m" + i));
            assertEquals(201, r.status(), r.body());
        }
        String after = server.operator().get("/metrics").body();
        assertEquals(before + 3, value(after, series), 0.0, "three posts, three more in " + series);
        // no id, user or workspace is ever a label value: the workspace's id appears nowhere in the figures
        assertTrue(!after.contains(u.defaultSpaceId()) && !after.contains(u.username()), "a workspace in a label");
    }

    @Test
    void theFiguresAreValidPrometheusTextWithEveryNamedFamily(AtriumServer server, @TempDir Path tmp) throws Exception {
        // Git traffic first, so that the pack figures have counted something
        AtriumServer.User u = server.newUser();
        Http.Reply repo = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "measured"));
        assertEquals(201, repo.status(), repo.body());
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("w"), "a.txt", "a\n");
        String remote = server.base() + "/git/" + u.username() + "/measured.git";
        git.ok(work, "push", "-q", remote, "main");
        git.ok(tmp, "clone", "-q", remote, tmp.resolve("c").toString());

        String text = server.operator().get("/metrics").body();
        for (String family : FAMILIES) {
            assertTrue(
                    Pattern.compile("(?m)^" + Pattern.quote(family) + "[{ ]")
                            .matcher(text)
                            .find(),
                    family);
        }
        assertTrue(value(text, "atrium_git_pack_seconds_count{service=\"receive-pack\"}") >= 1, "the push is counted");
        assertTrue(
                value(text, "atrium_git_pack_bytes_total{direction=\"out\",service=\"upload-pack\"}") > 0,
                "the clone's pack bytes are counted");

        Path promtool = promtool();
        Path file = tmp.resolve("metrics.txt");
        Files.writeString(file, text);
        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics")
                .redirectInput(file.toFile())
                .redirectErrorStream(true)
                .start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "promtool check metrics:\n" + said);
        assertEquals("", said.trim(), "promtool found problems");
    }

    /** Prometheus's promtool, which {@code ./atrium test} unpacks from Debian's prometheus package. */
    static Path promtool() {
        String set = System.getenv("PROMTOOL");
        Path p = set != null
                ? Path.of(set)
                : Path.of(System.getProperty("user.home"), ".cache/atrium/prometheus/usr/bin/promtool");
        assertTrue(Files.isExecutable(p), p + " is missing: ./atrium test provides it (or set PROMTOOL)");
        return p;
    }

    /** The value of one series (its name and labels as written), 0 if it is not there yet. */
    static double value(String text, String series) {
        Matcher m =
                Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }
}
