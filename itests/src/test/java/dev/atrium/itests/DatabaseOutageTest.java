package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What clients see while the database is gone (issue 32, finding 11): a server on a PostgreSQL of the test's own, with
 * clients writing and reading, while that PostgreSQL stops (a fast shutdown, which terminates the pool's connections
 * with 57P01) and starts again. Before, every failure was a 500 and requests hung for the pool's 10 s wait, while
 * {@code /healthz} said 200 throughout.
 */
class DatabaseOutageTest {

    private static final int CLIENTS = 4;

    record Outcome(int status, String body, String retryAfter, long millis, long at) {}

    @Test
    void aDatabaseThatStopsUnderLoadIs503WithRetryAfterAndAnUnhealthyServerThenServesAgainWithNoAcknowledgedWriteLost(
            @TempDir Path dir) throws Throwable {
        TestDatabase db = TestDatabase.ownServer(dir.resolve("pg"));
        AtriumServer server = AtriumServer.launch(Files.createDirectories(dir.resolve("data")), db);
        try {
            User u = server.newUser();
            String token = u.http().token();
            String memories = server.base() + "/api/spaces/" + u.defaultSpaceId() + "/memories";
            HttpClient client = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
            Map<String, String> acknowledged = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger sequence = new AtomicInteger();
            long origin = System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
            List<Future<?>> clients = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                boolean writer = i % 2 == 0;
                clients.add(pool.submit(() -> {
                    while (running.get()) {
                        String content = "kept " + sequence.incrementAndGet();
                        HttpRequest.Builder b = HttpRequest.newBuilder(
                                        URI.create(writer ? memories : memories + "?limit=5"))
                                .timeout(Duration.ofSeconds(30))
                                .header("Authorization", "Bearer " + token);
                        if (writer) {
                            b.header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString("{\"content\":\"" + content + "\"}"));
                        }
                        long started = System.nanoTime();
                        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
                        long ended = System.nanoTime();
                        outcomes.add(new Outcome(
                                r.statusCode(),
                                r.body(),
                                r.headers().firstValue("Retry-After").orElse(null),
                                (ended - started) / 1_000_000,
                                (ended - origin) / 1_000_000));
                        if (writer && r.statusCode() == 201) {
                            acknowledged.put(
                                    Http.JSON
                                            .readTree(r.body())
                                            .path("memory")
                                            .path("id")
                                            .asText(),
                                    content);
                        }
                    }
                    return null;
                }));
            }
            try {
                Thread.sleep(1_500);
                long stoppedAt = (System.nanoTime() - origin) / 1_000_000;
                db.stopServer();
                long unhealthyAfter = awaitHealth(server, 503, "database", Duration.ofSeconds(15));
                Thread.sleep(4_000);
                db.startServer();
                long restartedAt = (System.nanoTime() - origin) / 1_000_000;
                long healthyAfter = awaitHealth(server, 200, null, Duration.ofSeconds(30));
                Thread.sleep(1_500);
                running.set(false);
                for (Future<?> f : clients) {
                    f.get(60, TimeUnit.SECONDS);
                }
                System.out.printf(
                        "database outage: /healthz 503 %d ms after the stop, 200 again %d ms after the restart; %d requests%n",
                        unhealthyAfter, healthyAfter, outcomes.size());

                List<Outcome> failed =
                        outcomes.stream().filter(o -> o.status() >= 300).toList();
                assertTrue(
                        failed.stream().anyMatch(o -> o.status() == 503),
                        "the outage refused no request: " + outcomes.size() + " sent");
                for (Outcome o : failed) {
                    assertEquals(503, o.status(), "a request during the outage: " + o);
                    JsonNode error = Http.JSON.readTree(o.body());
                    assertTrue(error.size() == 1 && error.path("error").size() == 2, "not the spec body: " + o);
                    assertEquals(
                            "SERVICE_UNAVAILABLE",
                            error.path("error").path("code").asText(),
                            o.toString());
                    assertEquals("5", o.retryAfter(), "a 503 says when to retry: " + o);
                }
                // once the server knows the database is gone, it answers at once instead of holding requests for the
                // pool's wait
                long known = stoppedAt + unhealthyAfter;
                AtomicLong slowest = new AtomicLong();
                outcomes.stream()
                        .filter(o -> o.at() - o.millis() > known + 1_000 && o.at() < restartedAt)
                        .forEach(o -> slowest.accumulateAndGet(o.millis(), Math::max));
                assertTrue(
                        slowest.get() < 5_000,
                        "a request while the database was known to be down took " + slowest.get() + " ms");
                assertTrue(healthyAfter < 30_000);

                // nothing acknowledged is lost, and the server writes again
                for (Map.Entry<String, String> e : acknowledged.entrySet()) {
                    Http.Reply r = u.http().get("/api/memories/" + e.getKey());
                    assertEquals(200, r.status(), r.body());
                    assertEquals(
                            e.getValue(),
                            r.json().path("memory").path("content").asText(),
                            r.body());
                }
                assertEquals(
                        201,
                        u.http()
                                .post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "after"))
                                .status());
            } finally {
                running.set(false);
                pool.shutdownNow();
                db.startServer(); // a no-op unless the test failed while it was stopped
            }
        } finally {
            server.close();
        }
    }

    /** Waits until {@code /healthz} answers {@code status} (and names {@code naming}); returns how long that took. */
    private static long awaitHealth(AtriumServer server, int status, String naming, Duration limit) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        long started = System.nanoTime();
        String last = "";
        while (System.nanoTime() - started < limit.toNanos()) {
            HttpResponse<String> r = client.send(
                    HttpRequest.newBuilder(URI.create(server.base() + "/healthz"))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            last = r.statusCode() + " " + r.body();
            if (r.statusCode() == status && (naming == null || r.body().contains(naming))) {
                JsonNode body = Http.JSON.readTree(r.body());
                if (status == 503) {
                    assertEquals(
                            "SERVICE_UNAVAILABLE",
                            body.path("error").path("code").asText(),
                            r.body());
                }
                return (System.nanoTime() - started) / 1_000_000;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("/healthz did not answer " + status + (naming == null ? "" : " naming " + naming)
                + " within " + limit + "; last: " + last);
    }
}
