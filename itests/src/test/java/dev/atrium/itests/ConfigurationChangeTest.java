package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A configuration change restarts the components that read it, which makes Aries rebuild the JAX-RS application; while
 * it does, every route of the application would answer "no route". Clients of the other capabilities see none of it:
 * a request arriving during the rebuild waits for it (issue 41: a configuration file made unrelated APIs 404).
 */
@Timeout(240)
class ConfigurationChangeTest {

    private static final String REBUILDS = "atrium_jaxrs_rebuilds_total";

    @Test
    void changingTheRunsAndDomainsSettingsFailsNoRequestOfAnotherCapability() throws Throwable {
        Path data = Files.createTempDirectory("atrium-config-change-");
        AtriumServer server = AtriumServer.launch(data, TestDatabase.create());
        try {
            User u = server.newUser();
            String space = "/api/spaces/" + u.defaultSpaceId();
            assertEquals(
                    201,
                    u.http()
                            .post(space + "/memories", Map.of("content", "kept"))
                            .status());
            List<String> routes = List.of("/api/spaces/me", space + "/memories", space + "/repos", space + "/skills");
            for (String route : routes) {
                Http.Reply r = u.http().get(route);
                assertEquals(200, r.status(), route + ": " + r.body());
            }

            AtomicBoolean stop = new AtomicBoolean();
            Queue<String> failures = new ConcurrentLinkedQueue<>();
            AtomicInteger answered = new AtomicInteger();
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                int first = c;
                Thread t = new Thread(() -> {
                    for (int i = first; !stop.get(); i++) {
                        String route = routes.get(i % routes.size());
                        Http.Reply r = u.http().get(route);
                        if (r.status() == 200) {
                            answered.incrementAndGet();
                        } else {
                            failures.add(route + " " + r.status() + " " + r.body());
                        }
                    }
                });
                t.start();
                clients.add(t);
            }
            try {
                double before = rebuilds(server);
                Files.writeString(
                        data.resolve("deploy/dev.atrium.runs.config"), "stepLimit=I\"9\"\n", StandardCharsets.UTF_8);
                // runs' change restarts its settings and what uses them, which rebuilds the application only when one
                // of its resources was in use then; custom domains' API reads its own PID, so its change always does
                // (and a rebuild is what makes this test mean something)
                Files.writeString(
                        data.resolve("deploy/dev.atrium.services.domains.config"),
                        "verifyTimeoutSeconds=I\"6\"\n",
                        StandardCharsets.UTF_8);
                // FileInstall polls every 0.5 s; the change restarts runs' settings and what uses them, and the
                // application is rebuilt at least once (which is what makes this test mean something)
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (rebuilds(server) <= before && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                assertTrue(rebuilds(server) > before, "the configuration change never rebuilt the JAX-RS application");
                // runs' own routes are back once the server is ready again; the clients go on a moment past that
                deadline = System.nanoTime() + 30_000_000_000L;
                while (server.anonymous().get("/healthz").status() != 200 && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                Thread.sleep(1000);
            } finally {
                stop.set(true);
                for (Thread t : clients) {
                    t.join(30_000);
                }
            }
            assertTrue(failures.isEmpty(), failures.size() + " failed requests, e.g. " + failures.peek());
            assertTrue(answered.get() > 20, answered.get() + " requests answered");
            Http.Reply runs = u.http().get("/api/runs/00000000-0000-0000-0000-000000000000");
            assertEquals(404, runs.status(), "runs answers again: " + runs.body());
        } finally {
            server.close();
        }
    }

    private static double rebuilds(AtriumServer server) {
        return MetricsTest.value(server.operator().get("/metrics").body(), REBUILDS);
    }
}
