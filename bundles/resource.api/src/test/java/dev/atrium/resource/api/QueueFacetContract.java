package dev.atrium.resource.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.QueueFacet.QueueMessage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every {@code queue} backend does, whatever it keeps messages in. A backend's test extends this with its provider
 * on a real backend, a fresh resource per call of {@link #newResource(Map)}, and a main class that plays a consumer in
 * a process of its own (for the crash test).
 */
public abstract class QueueFacetContract {

    /** The provider under test; it implements {@link QueueFacet}. */
    protected abstract ResourceProvider provider();

    /** A new resource of the provider with {@code config} (validated against the provider's schema), provisioned. */
    protected abstract TestResourceContext newResource(Map<String, ?> config) throws Exception;

    /**
     * The arguments after {@code java -cp <this test's class path>} that start a consumer of {@code r} in another
     * process: a main that builds the provider on the same backend and calls {@link #consumeOneAndHang}.
     */
    protected abstract List<String> consumerCommand(TestResourceContext r);

    /** Whether {@link QueueFacet#send} honours a delay (a backend without one refuses it as bad input). */
    protected boolean supportsDelay() {
        return true;
    }

    /**
     * What a consumer process runs: receive one message hidden for 2 s, print its id, wait to be killed. The test kills
     * it and asks for the message again within milliseconds of the print; the rest of the 2 s is waited out.
     */
    public static void consumeOneAndHang(QueueFacet queue, ResourceContext r) throws Exception {
        for (int i = 0; i < 100; i++) {
            List<QueueMessage> got = queue.receive(r, 1, Duration.ofSeconds(2));
            if (!got.isEmpty()) {
                System.out.println("RECEIVED " + got.get(0).id());
                System.out.flush();
                Thread.sleep(600_000);
            }
            Thread.sleep(100);
        }
        System.out.println("NOTHING");
    }

    private QueueFacet queue() {
        return (QueueFacet) provider();
    }

    private TestResourceContext newResource() throws Exception {
        return newResource(Map.of());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Receives until {@code want} messages came or {@code within} passed. */
    private List<QueueMessage> receiveUntil(ResourceContext r, int want, Duration visibility, Duration within)
            throws Exception {
        List<QueueMessage> got = new ArrayList<>();
        Instant end = Instant.now().plus(within);
        while (got.size() < want && Instant.now().isBefore(end)) {
            got.addAll(queue().receive(r, Math.min(100, want - got.size()), visibility));
            if (got.size() < want) {
                Thread.sleep(50);
            }
        }
        return got;
    }

    @Test
    void aSentMessageIsReceivedByteForByteOnceAndGoneWhenAcked() throws Exception {
        ResourceContext r = newResource();
        byte[] body = {0, 1, (byte) 0xff, (byte) 0x80, 10, 13, 0};
        Instant before = Instant.now().minusSeconds(2);
        String id = queue().send(r, body, null);
        assertNotNull(id);
        List<QueueMessage> got = receiveUntil(r, 1, Duration.ofSeconds(30), Duration.ofSeconds(5));
        assertEquals(1, got.size());
        QueueMessage m = got.get(0);
        assertEquals(id, m.id());
        assertArrayEquals(body, m.body());
        assertEquals(1, m.attempts());
        assertTrue(
                !m.enqueuedAt().isBefore(before)
                        && !m.enqueuedAt().isAfter(Instant.now().plusSeconds(2)),
                m.enqueuedAt().toString());
        assertEquals(List.of(), queue().receive(r, 10, Duration.ofSeconds(30)), "a received message is hidden");
        assertTrue(queue().ack(r, m.receipt()));
        assertFalse(queue().ack(r, m.receipt()), "a receipt acknowledges once");
        queue().send(r, new byte[0], null);
        assertArrayEquals(
                new byte[0],
                receiveUntil(r, 1, Duration.ofSeconds(30), Duration.ofSeconds(5))
                        .get(0)
                        .body());
    }

    @Test
    void aMessageNotAckedInTimeIsDeliveredAgainAndItsOldReceiptNoLongerAcks() throws Exception {
        ResourceContext r = newResource();
        String id = queue().send(r, bytes("again"), null);
        QueueMessage first = receiveUntil(r, 1, Duration.ofMillis(1000), Duration.ofSeconds(5))
                .get(0);
        Instant received = Instant.now();
        assertEquals(List.of(), queue().receive(r, 1, Duration.ofSeconds(30)));
        List<QueueMessage> again = receiveUntil(r, 1, Duration.ofSeconds(30), Duration.ofSeconds(10));
        assertEquals(1, again.size(), "delivered again after the visibility timeout");
        assertTrue(Duration.between(received, Instant.now()).toMillis() >= 800, "not before the timeout");
        QueueMessage second = again.get(0);
        assertEquals(id, second.id());
        assertEquals(2, second.attempts());
        assertNotEquals(first.receipt(), second.receipt());
        assertFalse(queue().ack(r, first.receipt()), "the expired receipt");
        assertTrue(queue().ack(r, second.receipt()));
        Thread.sleep(300);
        assertEquals(List.of(), queue().receive(r, 1, Duration.ofSeconds(30)));
    }

    @Test
    void aMessageDeliveredMaxDeliveriesTimesWithoutAckMovesToTheDeadLetters() throws Exception {
        ResourceContext r = newResource(Map.of("max_deliveries", 2));
        String id = queue().send(r, bytes("poison"), null);
        for (int attempt = 1; attempt <= 2; attempt++) {
            List<QueueMessage> got = receiveUntil(r, 1, Duration.ofMillis(500), Duration.ofSeconds(10));
            assertEquals(1, got.size(), "delivery " + attempt);
            assertEquals(attempt, got.get(0).attempts());
        }
        Instant end = Instant.now().plusSeconds(10);
        List<QueueMessage> dead = List.of();
        while (dead.isEmpty() && Instant.now().isBefore(end)) {
            Thread.sleep(200);
            // a backend may move it when it next looks at the queue: a receive past the last attempt hands out nothing
            assertEquals(List.of(), queue().receive(r, 1, Duration.ofSeconds(30)), "the message past its last attempt");
            dead = queue().deadLetters(r, 10);
        }
        assertEquals(1, dead.size());
        assertEquals(id, dead.get(0).id());
        assertArrayEquals(bytes("poison"), dead.get(0).body());
        assertEquals(2, dead.get(0).attempts());
        String kept = queue().send(r, bytes("good"), null);
        // 1 s without the dead letter: twice the 500 ms its last delivery hid it for
        List<QueueMessage> rest = receiveUntil(r, 2, Duration.ofSeconds(30), Duration.ofSeconds(1));
        assertEquals(
                List.of(kept),
                rest.stream().map(QueueMessage::id).toList(),
                "the dead letter is never delivered again");
    }

    @Test
    void oneConsumerReceivesMessagesInSendOrder() throws Exception {
        ResourceContext r = newResource();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            sent.add(queue().send(r, bytes("m" + i), null));
        }
        List<String> received = new ArrayList<>();
        Instant end = Instant.now().plusSeconds(10);
        while (received.size() < 25 && Instant.now().isBefore(end)) {
            for (QueueMessage m : queue().receive(r, 7, Duration.ofSeconds(30))) {
                assertTrue(queue().ack(r, m.receipt()));
                assertEquals("m" + received.size(), new String(m.body(), StandardCharsets.UTF_8));
                received.add(m.id());
            }
        }
        assertEquals(sent, received);
    }

    @Test
    void aReceiveTakesAtMostMaxAndNothingFromAnEmptyQueue() throws Exception {
        ResourceContext r = newResource();
        assertEquals(List.of(), queue().receive(r, 10, Duration.ofSeconds(5)));
        for (int i = 0; i < 5; i++) {
            queue().send(r, bytes("x" + i), null);
        }
        Thread.sleep(200);
        List<QueueMessage> got = queue().receive(r, 3, Duration.ofSeconds(30));
        assertTrue(got.size() <= 3 && !got.isEmpty(), "got " + got.size());
        assertEquals(
                5 - got.size(),
                receiveUntil(r, 5 - got.size(), Duration.ofSeconds(30), Duration.ofSeconds(5))
                        .size());
    }

    @Test
    void aDelayedMessageIsHiddenUntilItsDelayPassed() throws Exception {
        ResourceContext r = newResource();
        if (!supportsDelay()) {
            ResourceException e =
                    assertThrows(ResourceException.class, () -> queue().send(r, bytes("later"), Duration.ofSeconds(1)));
            assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
            queue().send(r, bytes("now"), Duration.ZERO);
            return;
        }
        Instant sent = Instant.now();
        String id = queue().send(r, bytes("later"), Duration.ofMillis(1200));
        assertEquals(List.of(), queue().receive(r, 1, Duration.ofSeconds(30)));
        QueueMessage m = receiveUntil(r, 1, Duration.ofSeconds(30), Duration.ofSeconds(10))
                .get(0);
        assertEquals(id, m.id());
        assertTrue(Duration.between(sent, Instant.now()).toMillis() >= 1100);
        assertEquals(1, m.attempts());
    }

    @Test
    void badInputIsRefusedAndChangesNothing() throws Exception {
        TestResourceContext r = newResource(Map.of("max_message_bytes", 16));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().send(r, null, null));
        assertBad(ResourceException.Kind.TOO_LARGE, () -> queue().send(r, new byte[17], null));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().send(r, bytes("x"), Duration.ofSeconds(-1)));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().receive(r, 0, Duration.ofSeconds(1)));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().receive(r, 101, Duration.ofSeconds(1)));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().receive(r, 1, Duration.ZERO));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().receive(r, 1, null));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().receive(r, 1, Duration.ofDays(2)));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().ack(r, "not a receipt"));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().ack(r, null));
        assertBad(ResourceException.Kind.BAD_INPUT, () -> queue().deadLetters(r, 0));
        Thread.sleep(200);
        assertEquals(List.of(), queue().receive(r, 10, Duration.ofSeconds(1)), "nothing was enqueued");
        assertBad(
                ResourceException.Kind.BAD_INPUT,
                () -> provider().configSchema().validate(Map.of("max_deliveries", 0)));
        assertBad(
                ResourceException.Kind.BAD_INPUT,
                () -> provider().configSchema().validate(Map.of("max_deliveries", "3")));
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void assertBad(ResourceException.Kind kind, Call call) {
        ResourceException e = assertThrows(ResourceException.class, call::run);
        assertEquals(kind, e.kind(), e.getMessage());
    }

    @Test
    void resourcesAreKeptApartAndAReceiptOfOneAcksNothingInAnother() throws Exception {
        ResourceContext one = newResource();
        ResourceContext two = newResource();
        queue().send(one, bytes("one"), null);
        Thread.sleep(200);
        assertEquals(List.of(), queue().receive(two, 10, Duration.ofSeconds(1)));
        QueueMessage m = receiveUntil(one, 1, Duration.ofSeconds(30), Duration.ofSeconds(5))
                .get(0);
        boolean ackedElsewhere;
        try {
            ackedElsewhere = queue().ack(two, m.receipt());
        } catch (ResourceException e) {
            assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
            ackedElsewhere = false;
        }
        assertFalse(ackedElsewhere);
        assertTrue(queue().ack(one, m.receipt()), "the receipt still acknowledges in its own queue");
        assertEquals(List.of(), queue().deadLetters(two, 10));
    }

    @Test
    void deprovisioningRemovesEveryMessageAndMayBeRepeated() throws Exception {
        ResourceContext r = newResource();
        ResourceContext other = newResource();
        for (int i = 0; i < 50; i++) {
            queue().send(r, bytes("m" + i), null);
        }
        queue().send(other, bytes("kept"), null);
        provider().deprovision(r);
        provider().deprovision(r);
        Thread.sleep(200);
        assertEquals(List.of(), queue().receive(r, 100, Duration.ofSeconds(1)));
        assertArrayEquals(
                bytes("kept"),
                receiveUntil(other, 1, Duration.ofSeconds(30), Duration.ofSeconds(5))
                        .get(0)
                        .body());
    }

    @Test
    void sendsAndReceivesAreMeteredAndTheBackendIsHealthy() throws Exception {
        TestResourceContext r = newResource();
        queue().send(r, bytes("v"), null);
        receiveUntil(r, 1, Duration.ofSeconds(30), Duration.ofSeconds(5));
        assertTrue(
                r.used("writes") >= 1 && r.used("reads") >= 1,
                "writes " + r.used("writes") + ", reads " + r.used("reads"));
        assertTrue(provider().health(r).healthy());
    }

    @Test
    @Timeout(60)
    void aConsumerKilledBeforeItsAckLosesNothingTheMessageComesAgainAfterTheVisibilityTimeout() throws Exception {
        TestResourceContext r = newResource();
        String id = queue().send(r, bytes("crash"), null);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.addAll(consumerCommand(r));
        Process consumer = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        Instant killed;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(consumer.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            assertEquals("RECEIVED " + id, line, "the consumer process received the message");
            consumer.destroyForcibly(); // SIGKILL: no ack, no cleanup
            assertTrue(consumer.waitFor(10, TimeUnit.SECONDS));
            killed = Instant.now();
        } finally {
            consumer.destroyForcibly();
        }
        assertEquals(
                List.of(),
                queue().receive(r, 1, Duration.ofSeconds(30)),
                "still hidden by the dead consumer's receive");
        List<QueueMessage> again = receiveUntil(r, 1, Duration.ofSeconds(30), Duration.ofSeconds(15));
        assertEquals(1, again.size(), "delivered again after the visibility timeout");
        assertEquals(id, again.get(0).id());
        assertEquals(2, again.get(0).attempts());
        assertArrayEquals(bytes("crash"), again.get(0).body());
        assertTrue(Duration.between(killed, Instant.now()).toMillis() < 15_000);
        assertTrue(queue().ack(r, again.get(0).receipt()));
    }

    @Test
    @Timeout(300)
    void tenThousandMessagesToFourConcurrentConsumersAreEachAcknowledgedExactlyOnce() throws Exception {
        TestResourceContext r = newResource();
        int total = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Set<String> sent = ConcurrentHashMap.newKeySet();
            List<Future<?>> senders = new ArrayList<>();
            for (int s = 0; s < 4; s++) {
                int from = s * (total / 4);
                senders.add(pool.submit(() -> {
                    for (int i = from; i < from + total / 4; i++) {
                        sent.add(queue().send(r, bytes("m" + i), null));
                    }
                    return null;
                }));
            }
            for (Future<?> f : senders) {
                f.get();
            }
            assertEquals(total, sent.size(), "every send got its own id");
            Map<String, Integer> acked = new ConcurrentHashMap<>();
            AtomicInteger deliveries = new AtomicInteger();
            AtomicInteger failedAcks = new AtomicInteger();
            List<Future<?>> consumers = new ArrayList<>();
            Instant end = Instant.now().plusSeconds(240);
            for (int c = 0; c < 4; c++) {
                consumers.add(pool.submit(() -> {
                    // a consumer gives up after 10 s without a message: a backend may take a few seconds to offer
                    // again a message it handed out that never reached the receive (NATS: its ack wait)
                    Instant lastMessage = Instant.now();
                    while (acked.size() < total
                            && Instant.now().isBefore(end)
                            && Duration.between(lastMessage, Instant.now()).compareTo(Duration.ofSeconds(10)) < 0) {
                        List<QueueMessage> got = queue().receive(r, 10, Duration.ofSeconds(60));
                        if (!got.isEmpty()) {
                            lastMessage = Instant.now();
                        }
                        for (QueueMessage m : got) {
                            deliveries.incrementAndGet();
                            if (queue().ack(r, m.receipt())) {
                                acked.merge(m.id(), 1, Integer::sum);
                            } else {
                                failedAcks.incrementAndGet();
                            }
                        }
                        if (got.isEmpty()) {
                            Thread.sleep(20);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : consumers) {
                f.get();
            }
            assertEquals(sent, acked.keySet(), "every message acknowledged, none lost");
            assertEquals(
                    List.of(), acked.values().stream().filter(n -> n != 1).toList(), "no message acknowledged twice");
            assertEquals(total, deliveries.get(), "no message delivered twice while its receive was valid");
            assertEquals(0, failedAcks.get());
            assertEquals(List.of(), queue().receive(r, 10, Duration.ofSeconds(1)));
        } finally {
            pool.shutdownNow();
        }
    }
}
