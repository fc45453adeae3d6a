import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Run event append -> SSE client latency: SUBSCRIBERS clients hold GET /api/runs/:id/sse on one (queued, so open)
 * run while EVENTS events are appended to it (each POST /api/runs/:id/artifacts appends one `artifact.created`
 * event), one every 20 ms. Latency = arrival at the client minus the event's created_at (PostgreSQL's clock, same
 * machine). Prints median, p90, p99 and max over every (event, subscriber) pair, and events lost.
 * java SseLatency.java BASE_URL TOKEN [SUBSCRIBERS] [EVENTS]
 */
public final class SseLatency {

    static final Pattern CREATED = Pattern.compile("\"type\":\"artifact.created\".*\"created_at\":\"([^\"]+)\"");

    public static void main(String[] args) throws Exception {
        String base = args[0];
        String token = args[1];
        int subscribers = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int events = args.length > 3 ? Integer.parseInt(args[3]) : 200;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        String user = post(http, base + "/api/auth/me", token, null);
        String thread = field(post(http, base + "/api/spaces/bench/threads", token, "{\"title\":\"bench\"}"), "id");
        String run = field(post(http, base + "/api/threads/" + thread + "/runs", token, "{}"), "id");

        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger received = new AtomicInteger();
        CountDownLatch connected = new CountDownLatch(subscribers);
        List<CompletableFuture<?>> streams = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < subscribers; i++) {
            HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/api/runs/" + run + "/sse"))
                    .header("Authorization", "Bearer " + token).header("Accept", "text/event-stream").build();
            streams.add(http.sendAsync(req, HttpResponse.BodyHandlers.fromLineSubscriber(new java.util.concurrent.Flow.Subscriber<String>() {
                public void onSubscribe(java.util.concurrent.Flow.Subscription s) {
                    connected.countDown();
                    s.request(Long.MAX_VALUE);
                }

                public void onNext(String line) {
                    if (line.startsWith("data:")) {
                        Matcher m = CREATED.matcher(line);
                        if (m.find()) {
                            long now = System.currentTimeMillis() * 1000 + (System.nanoTime() / 1000) % 1000;
                            Instant created = Instant.parse(m.group(1));
                            long createdMicros = created.getEpochSecond() * 1_000_000 + created.getNano() / 1000;
                            latencies.add(System.currentTimeMillis() * 1000 - createdMicros);
                            received.incrementAndGet();
                        }
                    }
                }

                public void onError(Throwable t) {
                }

                public void onComplete() {
                }
            })));
        }
        if (!connected.await(120, TimeUnit.SECONDS)) {
            System.out.println("only " + (subscribers - connected.getCount()) + " of " + subscribers + " subscribers connected");
        }
        Thread.sleep(2_000); // let every subscription register and read its backlog
        System.out.printf("%d subscribers connected in %d ms%n", subscribers, (System.nanoTime() - t0) / 1_000_000);
        for (int i = 0; i < events; i++) {
            post(http, base + "/api/runs/" + run + "/artifacts", token, "{\"name\":\"a" + i + "\",\"content\":\"x\"}");
            Thread.sleep(20);
        }
        long deadline = System.currentTimeMillis() + 30_000;
        while (received.get() < subscribers * events && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        List<Long> sorted;
        synchronized (latencies) {
            sorted = new ArrayList<>(latencies);
        }
        Collections.sort(sorted);
        int n = sorted.size();
        System.out.printf("events appended: %d, subscribers: %d, deliveries: %d of %d (lost %d)%n", events, subscribers, n,
                (long) subscribers * events, (long) subscribers * events - n);
        if (n > 0) {
            System.out.printf("append -> SSE client latency: median %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (target p99 <= 20 ms)%n",
                    sorted.get(n / 2) / 1000.0, sorted.get((int) (n * 0.90)) / 1000.0, sorted.get(Math.min(n - 1, (int) (n * 0.99))) / 1000.0,
                    sorted.get(n - 1) / 1000.0);
        }
        System.exit(0);
    }

    static String post(HttpClient http, String url, String token, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token);
        b = json == null ? b.GET() : b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\"([^\"]+)\"").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        return m.group(1);
    }
}
