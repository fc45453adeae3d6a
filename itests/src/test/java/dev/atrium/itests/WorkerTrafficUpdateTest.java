package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
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
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

import dev.atrium.itests.AtriumServer.User;

/**
 * A deployed worker keeps answering while the bundle that routes to it is updated (issue 43): clients on the worker's
 * hostname and on the API send all along, and none of them gets the API's 404, another body than the worker's, or a
 * 500. The worker counts its requests in memory, so a count that never went back shows its process was adopted by
 * the new revision, not restarted.
 */
@Isolated
@SharedServer
class WorkerTrafficUpdateTest {

    static final Path SERVICES = AtriumServer.ROOT.resolve("bundles/services/target/services-0.1.0-SNAPSHOT.jar");
    static final String BSN = "dev.atrium.services";
    static final int UPDATES = 6;

    static final String COUNTER = """
            let served = 0;
            export default {
              async fetch(request) {
                served++;
                return new Response("counter-v1 " + served, { headers: { "content-type": "text/plain" } });
              }
            };
            """;

    /** The services jar with another Bundle-Version, so each update installs a new revision. */
    static byte[] build(String qualifier) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarInputStream in = new JarInputStream(Files.newInputStream(SERVICES))) {
            Manifest manifest = new Manifest(in.getManifest());
            manifest.getMainAttributes().putValue("Bundle-Version", "0.1.0." + qualifier);
            try (JarOutputStream out = new JarOutputStream(bytes, manifest)) {
                for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                    out.putNextEntry(new JarEntry(e.getName()));
                    out.write(in.readAllBytes());
                    out.closeEntry();
                }
            }
        }
        return bytes.toByteArray();
    }

    @Test
    void workerTrafficIsHeldNotMisroutedWhileTheRoutingBundleUpdatesAndTheWorkerProcessSurvives(AtriumServer server) throws Exception {
        Assumptions.assumeTrue(ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique("counter"));
        String host = u.http().get("/api/services/" + id).get("service").get("slug").asText() + ".apps.localhost";
        Http.Reply deployed = u.http().post("/api/services/" + id + "/deployments",
                Map.of("bundle", Base64.getEncoder().encodeToString(COUNTER.getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, deployed.status(), deployed.body());
        String token = u.http().get("/api/me").raw().request().headers().firstValue("Authorization").orElseThrow();
        String api = server.base() + "/api/spaces/" + u.defaultSpaceId();

        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong apiRequests = new AtomicLong();
        AtomicLong workerRequests = new AtomicLong();
        AtomicLong longest = new AtomicLong();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            boolean worker = i % 2 == 0;
            Thread t = new Thread(() -> {
                while (running.get()) {
                    long started = System.nanoTime();
                    try {
                        if (worker) {
                            RawHttp.Response r = HostHttp.get(server.port, host, "/hello");
                            String body = HostHttp.text(r);
                            workerRequests.incrementAndGet();
                            if (r.status() != 200 || !body.startsWith("counter-v1 ")) {
                                failures.add("worker " + r.status() + " " + body);
                            }
                        } else {
                            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(api)).header("Authorization", token)
                                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                            apiRequests.incrementAndGet();
                            if (r.statusCode() != 200) {
                                failures.add("api " + r.statusCode() + " " + r.body());
                            }
                        }
                    } catch (IOException | InterruptedException e) {
                        failures.add((worker ? "worker " : "api ") + e);
                    }
                    longest.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
                }
            }, "traffic-" + i);
            t.start();
            clients.add(t);
        }
        long updating = 0;
        try {
            Thread.sleep(500);
            byte[][] builds = { build("trafficA"), build("trafficB") };
            for (int i = 0; i < UPDATES; i++) {
                long started = System.nanoTime();
                Http.Reply r = server.operator().send("POST", "/admin/bundles/" + BSN + "/update", builds[i % 2], "application/java-archive");
                updating = Math.max(updating, (System.nanoTime() - started) / 1_000_000);
                assertEquals(200, r.status(), "update " + i + ": " + r.body());
                Thread.sleep(300);
            }
            Thread.sleep(300);
        } finally {
            running.set(false);
            for (Thread t : clients) {
                t.join(30_000);
            }
            assertEquals(200, server.operator().send("POST", "/admin/bundles/" + BSN + "/update", Files.readAllBytes(SERVICES),
                    "application/java-archive").status(), "restore the original build");
        }
        RawHttp.Response last = HostHttp.get(server.port, host, "/hello");
        long count = Long.parseLong(HostHttp.text(last).substring("counter-v1 ".length()));
        System.out.println("worker traffic under " + UPDATES + " updates of " + BSN + ": " + workerRequests.get() + " worker and "
                + apiRequests.get() + " API requests by 8 clients, " + failures.size() + " failed, longest request " + longest.get()
                + " ms, longest update " + updating + " ms, the worker counted " + count);
        assertEquals(List.of(), failures.subList(0, Math.min(20, failures.size())), failures.size() + " requests failed");
        assertTrue(workerRequests.get() > 50 && apiRequests.get() > 50, "the load ran: " + workerRequests + " / " + apiRequests);
        assertTrue(count > workerRequests.get(), "the worker's process kept running through the updates: it counted " + count + " of "
                + workerRequests.get() + " requests");
    }

    /**
     * Disabling the services feature is not an update: its hosts are answered 503 at once (not held, and never by the
     * API), and its workers stop; enabled again, the worker runs in a new process.
     */
    @Test
    void aDisabledServicesFeatureAnswersItsHostsWith503AtOnceAndStopsItsWorkers(AtriumServer server) throws Exception {
        Assumptions.assumeTrue(ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique("counter"));
        String host = u.http().get("/api/services/" + id).get("service").get("slug").asText() + ".apps.localhost";
        assertEquals(201, u.http().post("/api/services/" + id + "/deployments",
                Map.of("bundle", Base64.getEncoder().encodeToString(COUNTER.getBytes(StandardCharsets.UTF_8)))).status());
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
            assertTrue(HostHttp.text(refused).contains("\"code\"") && HostHttp.text(refused).contains("dev.atrium.services is not running"),
                    HostHttp.text(refused));
            assertEquals("5", refused.header("retry-after"));
            assertTrue(tookMs < 2_000, "answered at once, not held: " + tookMs + " ms");
        } finally {
            Http.Reply on = server.operator().post("/admin/features/services/enable", Map.of());
            assertEquals(200, on.status(), on.body());
        }
        RawHttp.Response again = HostHttp.get(server.port, host, "/");
        assertEquals(200, again.status(), HostHttp.text(again));
        assertEquals("counter-v1 1", HostHttp.text(again), "the worker was stopped with the feature and started anew");
    }
}
