package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A deployed worker keeps answering while the bundle that routes to it is updated (issue 43): clients on the worker's
 * hostname and on the API send all along, and none of them gets the API's 404, another body than the worker's, or a
 * 500. The worker counts its requests in memory, so a count that never went back shows its process was adopted by
 * the new revision, not restarted; and a WebSocket to it opened before the first update still echoes after the last.
 */
@Isolated
@SharedServer
class WorkerTrafficUpdateTest {

    static final Path ROUTING =
            AtriumServer.ROOT.resolve("bundles/services.routing/target/services.routing-0.1.0-SNAPSHOT.jar");
    static final String BSN = "dev.atrium.services.routing";
    static final Path SERVICES = AtriumServer.ROOT.resolve("bundles/services/target/services-0.1.0-SNAPSHOT.jar");
    static final Path BINDINGS =
            AtriumServer.ROOT.resolve("bundles/services.bindings/target/services.bindings-0.1.0-SNAPSHOT.jar");
    /*
     * Issue 43's 20 updates of the bundles that route worker traffic (the Host router and the binding gateway), of the
     * workerd provider and of resources, which serves the bindings. services itself updates 3 times in the suite (about
     * 4 s each); -Datrium.traffic.updates=20 runs 20 of those too (bench/README.md).
     */
    static final int UPDATES = 20;
    static final int SERVICES_UPDATES = Integer.getInteger("atrium.traffic.updates", 3);
    static final Path WORKERD =
            AtriumServer.ROOT.resolve("bundles/deploy.workerd/target/deploy.workerd-0.1.0-SNAPSHOT.jar");
    /** An update of deploy.workerd takes under a second now that it hands its processes over. */
    static final int WORKERD_UPDATES = 20;

    static final String COUNTER = """
            let served = 0;
            export default {
              async fetch(request) {
                if (request.headers.get("Upgrade") === "websocket") {
                  const [client, server] = Object.values(new WebSocketPair());
                  server.accept();
                  server.addEventListener("message", e => server.send("echo " + e.data));
                  return new Response(null, { status: 101, webSocket: client });
                }
                served++;
                return new Response("counter-v1 " + served, { headers: { "content-type": "text/plain" } });
              }
            };
            """;

    /** What clients got while a bundle was updated. */
    record Load(
            long workerRequests, long apiRequests, List<String> failures, long longestRequestMs, long longestUpdateMs) {
        String figures(int updates, String bsn) {
            return updates + " updates of " + bsn + ": " + workerRequests + " worker and " + apiRequests
                    + " API requests by 8 clients, " + failures.size() + " failed, longest request " + longestRequestMs
                    + " ms, longest update " + longestUpdateMs + " ms";
        }
    }

    /** Each update's check, run after it (e.g. that a WebSocket still relays). */
    interface AfterUpdate {
        void check(int update) throws Exception;
    }

    /**
     * Updates {@code jar}'s bundle {@code updates} times (two builds in turn, then the original) while 4 clients send
     * to the worker at {@code host} and {@code path}, expecting a 200 whose body starts with {@code body}, and 4 to the API.
     */
    static Load underUpdates(
            AtriumServer server,
            User u,
            String host,
            String path,
            String body,
            Path jar,
            String bsn,
            int updates,
            AfterUpdate after)
            throws Exception {
        String token = u.http()
                .get("/api/me")
                .raw()
                .request()
                .headers()
                .firstValue("Authorization")
                .orElseThrow();
        String api = server.base() + "/api/spaces/" + u.defaultSpaceId();
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong apiRequests = new AtomicLong();
        AtomicLong workerRequests = new AtomicLong();
        AtomicLong longest = new AtomicLong();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> clients = new ArrayList<>();
        ClientsServed served = new ClientsServed(8);
        long loadStarted = System.nanoTime();
        for (int i = 0; i < 8; i++) {
            int index = i;
            boolean worker = i % 2 == 0;
            Thread t = new Thread(
                    () -> {
                        while (running.get()) {
                            long started = System.nanoTime();
                            try {
                                if (worker) {
                                    RawHttp.Response r = HostHttp.get(server.port, host, path);
                                    String text = HostHttp.text(r);
                                    workerRequests.incrementAndGet();
                                    if (r.status() != 200 || !text.startsWith(body)) {
                                        failures.add("worker " + r.status() + " " + text);
                                    }
                                } else {
                                    HttpResponse<String> r = client.send(
                                            HttpRequest.newBuilder(URI.create(api))
                                                    .header("Authorization", token)
                                                    .timeout(Duration.ofSeconds(30))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString());
                                    apiRequests.incrementAndGet();
                                    if (r.statusCode() != 200) {
                                        failures.add("api " + r.statusCode() + " " + r.body());
                                    }
                                }
                            } catch (IOException | InterruptedException e) {
                                failures.add((worker ? "worker " : "api ") + e);
                            }
                            longest.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
                            served.finished(index, started);
                        }
                    },
                    "traffic-" + i);
            t.start();
            clients.add(t);
        }
        long updating = 0;
        try {
            byte[][] builds = {Jars.withQualifier(jar, "trafficA"), Jars.withQualifier(jar, "trafficB")};
            served.awaitEverySince(loadStarted, "before the first update");
            for (int i = 0; i < updates; i++) {
                long started = System.nanoTime();
                Http.Reply r = server.operator()
                        .send("POST", "/admin/bundles/" + bsn + "/update", builds[i % 2], "application/java-archive");
                long done = System.nanoTime();
                updating = Math.max(updating, (done - started) / 1_000_000);
                assertEquals(200, r.status(), "update " + i + ": " + r.body());
                // the next update once every client has had an answer from this revision, not after a fixed pause
                served.awaitEverySince(done, "after update " + i);
                after.check(i);
            }
            Thread.sleep(300);
        } finally {
            running.set(false);
            for (Thread t : clients) {
                t.join(30_000);
            }
            assertEquals(
                    200,
                    server.operator()
                            .send(
                                    "POST",
                                    "/admin/bundles/" + bsn + "/update",
                                    Files.readAllBytes(jar),
                                    "application/java-archive")
                            .status(),
                    "restore the original build");
        }
        return new Load(workerRequests.get(), apiRequests.get(), failures, longest.get(), updating);
    }

    static void assertServed(Load load) {
        assertEquals(
                List.of(),
                load.failures().subList(0, Math.min(20, load.failures().size())),
                load.failures().size() + " requests failed");
        assertTrue(load.workerRequests() > 50 && load.apiRequests() > 50, "the load ran: " + load);
    }

    static String deploy(User u, String code) {
        String id = ServicesTest.createService(u, ServicesTest.unique("counter"));
        Http.Reply deployed = u.http()
                .post(
                        "/api/services/" + id + "/deployments",
                        Map.of("bundle", Base64.getEncoder().encodeToString(code.getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, deployed.status(), deployed.body());
        return id;
    }

    static String host(User u, String serviceId) {
        return u.http()
                        .get("/api/services/" + serviceId)
                        .get("service")
                        .get("slug")
                        .asText() + ".apps.localhost";
    }

    @Test
    void workerTrafficIsHeldNotMisroutedWhileTheRoutingBundleUpdatesAndTheWorkerProcessSurvives(AtriumServer server)
            throws Exception {
        servedWithAWebSocketOpenThroughUpdatesOf(server, ROUTING, BSN, UPDATES);
    }

    /**
     * The services bundle itself (the API and the reconciler that publishes the routing table) updates: the router
     * waits for the table of its next revision, holding requests meanwhile, and the workers keep running.
     */
    @Test
    void workerTrafficIsHeldWhileTheServicesBundleThatPublishesTheRoutesUpdates(AtriumServer server) throws Exception {
        servedWithAWebSocketOpenThroughUpdatesOf(server, SERVICES, "dev.atrium.services", SERVICES_UPDATES);
    }

    /**
     * The workerd deployment provider's own bundle updates: it hands its running workerd processes to its next revision
     * (the kernel's Keepsakes), which adopts them instead of starting them again, so the worker's count goes on, its
     * WebSocket stays open, and requests that arrive while the provider is away wait for it.
     */
    @Test
    void workerProcessesAreAdoptedNotRestartedWhenTheWorkerdProviderUpdates(AtriumServer server) throws Exception {
        servedWithAWebSocketOpenThroughUpdatesOf(server, WORKERD, "dev.atrium.deploy.workerd", WORKERD_UPDATES);
    }

    private static void servedWithAWebSocketOpenThroughUpdatesOf(AtriumServer server, Path jar, String bsn, int updates)
            throws Exception {
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
        User u = server.newUser();
        String host = host(u, deploy(u, COUNTER));
        WsClient.Handshake handshake = WsClient.connect(server.port, host, "/ws", Map.of());
        assertEquals(101, handshake.status(), new String(handshake.body(), StandardCharsets.UTF_8));
        try (WsClient ws = handshake.client()) {
            ws.sendText("before");
            assertEquals("echo before", ws.read().text());
            Load load = underUpdates(server, u, host, "/hello", "counter-v1 ", jar, bsn, updates, i -> {
                ws.sendText("after update " + i);
                assertEquals(
                        "echo after update " + i,
                        ws.read().text(),
                        "the WebSocket opened before the updates still relays");
            });
            ws.sendText("at the end");
            assertEquals("echo at the end", ws.read().text());
            ws.close(1000, "done");
            long count = Long.parseLong(
                    HostHttp.text(HostHttp.get(server.port, host, "/hello")).substring("counter-v1 ".length()));
            System.out.println("worker traffic under " + load.figures(updates, bsn) + ", the worker counted " + count
                    + ", one WebSocket open throughout");
            assertServed(load);
            assertTrue(
                    count > load.workerRequests(),
                    "the worker's process kept running through the updates: it counted " + count + " of "
                            + load.workerRequests() + " requests");
        }
    }

    /** A worker reading a bound kv entry keeps answering while {@code resources}, which serves the binding, updates. */
    @Test
    void workersReadingABoundKvEntryAreServedWhileTheResourcesBundleUpdates(AtriumServer server) throws Exception {
        kvReadsServedThroughUpdatesOf(
                server,
                AtriumServer.ROOT.resolve("bundles/resources/target/resources-0.1.0-SNAPSHOT.jar"),
                "dev.atrium.resources",
                UPDATES);
    }

    /** The same while the binding gateway, which answers the worker's binding calls, updates. */
    @Test
    void workersReadingABoundKvEntryAreServedWhileTheBindingGatewayUpdates(AtriumServer server) throws Exception {
        kvReadsServedThroughUpdatesOf(server, BINDINGS, "dev.atrium.services.bindings", UPDATES);
    }

    private static void kvReadsServedThroughUpdatesOf(AtriumServer server, Path jar, String bsn, int updates)
            throws Exception {
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
        User u = server.newUser();
        String kv = u.http()
                .post("/api/resources", Map.of("name", "cache", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();
        String id = ServicesTest.createService(u, ServicesTest.unique("reader"));
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + id + "/bindings",
                                Map.of("bindings", List.of(Map.of("name", "CACHE", "resource_id", kv))))
                        .status());
        Http.Reply deployed = u.http()
                .post(
                        "/api/services/" + id + "/deployments",
                        Map.of("bundle", Base64.getEncoder().encodeToString("""
                export default {
                  async fetch(request, env) {
                    const url = new URL(request.url);
                    if (url.pathname === "/put") { await env.CACHE.put("greeting", "kept in kv"); return new Response("ok"); }
                    try { return new Response("read " + await env.CACHE.get("greeting")); }
                    catch (e) { return new Response("the binding failed: " + e.message, { status: 500 }); }
                  }
                };
                """.getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, deployed.status(), deployed.body());
        String host = host(u, id);
        assertEquals("ok", HostHttp.text(HostHttp.get(server.port, host, "/put")));
        Load load = underUpdates(server, u, host, "/get", "read kept in kv", jar, bsn, updates, i -> {});
        System.out.println("kv reads through a binding under " + load.figures(updates, bsn));
        assertServed(load);
    }

    /**
     * Disabling the services feature is not an update: its hosts are answered 503 at once (not held, and never by the
     * API), and its workers stop; enabled again, the worker runs in a new process.
     */
    @Test
    void aDisabledServicesFeatureAnswersItsHostsWith503AtOnceAndStopsItsWorkers(AtriumServer server) throws Exception {
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
        User u = server.newUser();
        String host = host(u, deploy(u, COUNTER));
        for (int i = 0; i < 3; i++) {
            assertEquals(200, HostHttp.get(server.port, host, "/").status());
        }
        Http.Reply off = server.operator().post("/admin/features/services/disable", Map.of());
        assertEquals(200, off.status(), off.body());
        try {
            long started = System.nanoTime();
            RawHttp.Response refused = HostHttp.get(server.port, host, "/");
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            assertEquals(503, refused.status(), HostHttp.text(refused));
            assertTrue(
                    HostHttp.text(refused).contains("\"code\"")
                            && HostHttp.text(refused).contains(BSN + " is not running"),
                    HostHttp.text(refused));
            assertEquals("5", refused.header("retry-after"));
            assertTrue(tookMs < 2_000, "answered at once, not held: " + tookMs + " ms");
        } finally {
            Http.Reply on = server.operator().post("/admin/features/services/enable", Map.of());
            assertEquals(200, on.status(), on.body());
        }
        RawHttp.Response again = HostHttp.get(server.port, host, "/");
        assertEquals(200, again.status(), HostHttp.text(again));
        assertEquals(
                "counter-v1 1",
                HostHttp.text(again),
                () -> "the worker was stopped with the feature and started anew; what the server said of it:\n"
                        + lifecycle(server));
    }

    /** The server's last lines on features, the services' deployer and workerd's generations. */
    private static String lifecycle(AtriumServer server) {
        List<String> lines = server.fullLog()
                .lines()
                .filter(l -> l.contains("FeatureSwitch") || l.contains("services:") || l.contains("workerd generation"))
                .toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
