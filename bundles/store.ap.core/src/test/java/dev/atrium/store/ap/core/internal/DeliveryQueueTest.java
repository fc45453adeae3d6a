package dev.atrium.store.ap.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.TestPostgres;
import java.lang.annotation.Annotation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The delivery queue on a real PostgreSQL, delivering to a real HTTP inbox on loopback. */
class DeliveryQueueTest {

    private static final String ACTOR = "https://atrium.example/ap/stores/main";

    @TempDir
    static Path dir;

    private static TestPostgres database;
    private static Peer peer;
    private static ActorKeyStore keys;
    private static GuardedFetcher fetcher;
    private static DeliveryQueue queue;

    static DeliveryQueue.Config quick(int maxAttempts) {
        return new DeliveryQueue.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return DeliveryQueue.Config.class;
            }

            @Override
            public int maxAttempts() {
                return maxAttempts;
            }

            @Override
            public double backoffBaseSeconds() {
                return 0.1;
            }

            @Override
            public double backoffMaxSeconds() {
                return 1;
            }

            @Override
            public long pollMillis() {
                return 50;
            }

            @Override
            public int senders() {
                return 4;
            }
        };
    }

    @BeforeAll
    static void start() throws Exception {
        database = TestPostgres.create("atrium_ap_delivery");
        peer = new Peer(dir);
        keys = new ActorKeyStore(
                database.dataSource(),
                database.migrations(ActorKeyStore.class, "/db/migration/V1__federation_core.sql"),
                TestPostgres.noBundleContext());
        fetcher = new GuardedFetcher(Peer.guard(true), keys, Peer.fetchTimeout(5));
        queue = new DeliveryQueue(database.dataSource(), fetcher, new Signatures(keys, fetcher), quick(4));
    }

    @AfterAll
    static void stop() throws Exception {
        queue.stop();
        fetcher.stop();
        peer.close();
        database.close();
    }

    private static Map<String, Object> await(String id, String state) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        Map<String, Object> last = null;
        while (System.currentTimeMillis() < deadline) {
            last = queue.list(null, 500).stream()
                    .filter(d -> d.get("id").equals(id))
                    .findFirst()
                    .orElseThrow();
            if (state.equals(last.get("state"))) {
                return last;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("delivery " + id + " did not become " + state + ": " + last);
    }

    private static void inbox(String path, Supplier<Integer> status) {
        peer.routes.put(path, ex -> new Peer.Response(status.get(), "text/plain", new byte[0], Map.of()));
    }

    @Test
    void anActivityArrivesSignedAndOpensslVerifiesTheSignature() throws Exception {
        inbox("/a/inbox", () -> 202);
        byte[] activity =
                "{\"type\":\"Push\",\"id\":\"https://atrium.example/activities/1\"}".getBytes(StandardCharsets.UTF_8);
        String id = queue.enqueue(ACTOR, URI.create(peer.base() + "/a/inbox"), activity);
        Map<String, Object> done = await(id, "delivered");
        assertEquals(1, done.get("attempts"));
        assertEquals(202, done.get("last_status"));
        Peer.Received got = peer.received.stream()
                .filter(r -> r.path().equals("/a/inbox"))
                .findFirst()
                .orElseThrow();
        assertEquals("POST", got.method());
        assertEquals(new String(activity, StandardCharsets.UTF_8), new String(got.body(), StandardCharsets.UTF_8));
        assertTrue(
                got.headers().get("Content-type").get(0).startsWith("application/activity+json"),
                got.headers().toString());
        Map<String, String> params =
                SigningString.parameters(got.headers().get("Signature").get(0));
        String text = "(request-target): post /a/inbox\nhost: "
                + got.headers().get("Host").get(0) + "\ndate: "
                + got.headers().get("Date").get(0) + "\ndigest: "
                + got.headers().get("Digest").get(0);
        assertEquals(SigningString.digest(activity), got.headers().get("Digest").get(0));
        assertTrue(peer.opensslVerifies(keys.keyOf(ACTOR).publicKeyPem(), text, params.get("signature")));
    }

    @Test
    void aPeerThatIsDownIsTriedAgainWithGrowingWaitsAndReachedWhenItReturns() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        List<Long> at = new java.util.concurrent.CopyOnWriteArrayList<>();
        inbox("/b/inbox", () -> {
            at.add(System.nanoTime());
            return calls.incrementAndGet() <= 3 ? 503 : 202;
        });
        String id = queue.enqueue(ACTOR, URI.create(peer.base() + "/b/inbox"), "{}".getBytes());
        Map<String, Object> done = await(id, "delivered");
        assertEquals(4, done.get("attempts"));
        long first = at.get(1) - at.get(0);
        long second = at.get(2) - at.get(1);
        long third = at.get(3) - at.get(2);
        assertTrue(
                first >= 75_000_000L && second >= 150_000_000L && third >= 300_000_000L,
                "waits of " + first / 1_000_000 + ", " + second / 1_000_000 + ", " + third / 1_000_000
                        + " ms do not grow from 0.1 s");
    }

    @Test
    void afterTheLastAttemptItIsADeadLetterAndARetryDeliversItOnceThePeerIsBack() throws Exception {
        AtomicInteger status = new AtomicInteger(500);
        inbox("/c/inbox", status::get);
        String id = queue.enqueue(ACTOR, URI.create(peer.base() + "/c/inbox"), "{}".getBytes());
        Map<String, Object> dead = await(id, "dead");
        assertEquals(4, dead.get("attempts"));
        assertTrue(String.valueOf(dead.get("last_error")).contains("500"), dead.toString());
        assertTrue(queue.list("dead", 50).stream().anyMatch(d -> d.get("id").equals(id)));
        status.set(200);
        assertTrue(queue.retry(id));
        assertEquals(1, await(id, "delivered").get("attempts"));
        assertTrue(!queue.retry(id), "only a dead letter is retried");
    }

    @Test
    void aRefusalOrAForbiddenAddressIsADeadLetterAtOnce() throws Exception {
        inbox("/d/inbox", () -> 410);
        String gone = queue.enqueue(ACTOR, URI.create(peer.base() + "/d/inbox"), "{}".getBytes());
        assertEquals(1, await(gone, "dead").get("attempts"));
        String metadata = queue.enqueue(ACTOR, URI.create("http://169.254.169.254/inbox"), "{}".getBytes());
        Map<String, Object> refused = await(metadata, "dead");
        assertEquals(1, refused.get("attempts"));
        assertTrue(String.valueOf(refused.get("last_error")).startsWith("refused"), refused.toString());
    }

    @Test
    void twoInstancesSharingTheQueueDeliverEachActivityExactlyOnce() throws Exception {
        peer.routes.put("/e/inbox", ex -> new Peer.Response(202, "text/plain", new byte[0], Map.of()));
        DeliveryQueue second =
                new DeliveryQueue(database.dataSource(), fetcher, new Signatures(keys, fetcher), quick(4));
        try {
            List<String> ids = new java.util.ArrayList<>();
            for (int i = 0; i < 200; i++) {
                DeliveryQueue via = i % 2 == 0 ? queue : second;
                ids.add(via.enqueue(ACTOR, URI.create(peer.base() + "/e/inbox"), ("{\"n\":" + i + "}").getBytes()));
            }
            for (String id : ids) {
                await(id, "delivered");
            }
            Map<String, Integer> counts = new HashMap<>();
            peer.received.stream()
                    .filter(r -> r.path().equals("/e/inbox"))
                    .forEach(r -> counts.merge(new String(r.body()), 1, Integer::sum));
            assertEquals(200, counts.size());
            assertTrue(counts.values().stream().allMatch(n -> n == 1), "an activity was delivered twice: " + counts);
        } finally {
            second.stop();
        }
    }

    @Test
    void aBacklogIsClaimedOnlyAsFastAsTheSendersTakeIt() throws Exception {
        peer.routes.put("/f/inbox", ex -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new Peer.Response(202, "text/plain", new byte[0], Map.of());
        });
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 60; i++) {
            ids.add(queue.enqueue(ACTOR, URI.create(peer.base() + "/f/inbox"), ("{\"f\":" + i + "}").getBytes()));
        }
        // 4 senders, 4 claims each: never more than 16 rows under a lease (with more, rows waiting behind a long
        // backlog would outlive their lease and be sent twice)
        int most = 0;
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            long leased = queue.list("pending", 500).stream()
                    .filter(d -> ids.contains(d.get("id")) && ((Number) d.get("attempts")).intValue() > 0)
                    .count();
            most = Math.max(most, (int) leased);
            if (queue.list("delivered", 500).stream()
                            .filter(d -> ids.contains(d.get("id")))
                            .count()
                    == ids.size()) {
                break;
            }
            Thread.sleep(20);
        }
        for (String id : ids) {
            await(id, "delivered");
        }
        assertTrue(most <= 16, "claimed ahead of the senders: " + most);
        assertEquals(
                60,
                peer.received.stream().filter(r -> r.path().equals("/f/inbox")).count(),
                "each sent once");
    }
}
