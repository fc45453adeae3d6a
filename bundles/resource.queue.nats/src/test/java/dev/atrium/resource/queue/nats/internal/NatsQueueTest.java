package dev.atrium.resource.queue.nats.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.QueueFacet.QueueMessage;
import dev.atrium.resource.api.QueueFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;
import java.lang.annotation.Annotation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The queue contract on the NATS JetStream at 127.0.0.1:4222 (ATRIUM_TEST_NATS overrides), under stream and subject prefixes of its own. */
class NatsQueueTest extends QueueFacetContract {

    static final String NATS = System.getenv().getOrDefault("ATRIUM_TEST_NATS", "nats://127.0.0.1:4222");
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static NatsQueue provider;

    static NatsQueueConfig config(String url, String run) {
        return config(url, run, 2000);
    }

    static NatsQueueConfig config(String url, String run, int timeoutMillis) {
        return new NatsQueueConfig() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return NatsQueueConfig.class;
            }

            @Override
            public String url() {
                return url;
            }

            @Override
            public int timeoutMillis() {
                return timeoutMillis;
            }

            @Override
            public String streamPrefix() {
                return "ATRIUM_TEST_" + run + "_";
            }

            @Override
            public String subjectPrefix() {
                return "atrium-test." + run + ".";
            }

            @Override
            public int ackWaitSeconds() {
                return 5;
            }
        };
    }

    @BeforeAll
    static void connect() throws Exception {
        provider = new NatsQueue(config(NATS, RUN));
    }

    @AfterAll
    static void close() throws Exception {
        provider.close();
    }

    @Override
    protected ResourceProvider provider() {
        return provider;
    }

    @Override
    protected TestResourceContext newResource(Map<String, ?> config) throws Exception {
        TestResourceContext r =
                new TestResourceContext(null, null, provider.configSchema().validate(config));
        provider.provision(r);
        return r;
    }

    @Override
    protected boolean supportsDelay() {
        return false;
    }

    @Override
    protected List<String> consumerCommand(TestResourceContext r) {
        return List.of(Consumer.class.getName(), NATS, RUN, r.resourceId());
    }

    /** A consumer in a process of its own: the provider on the same NATS, one receive, then it waits to be killed. */
    public static final class Consumer {
        public static void main(String[] args) throws Exception {
            NatsQueue queue = new NatsQueue(config(args[0], args[1]));
            consumeOneAndHang(
                    queue,
                    new TestResourceContext(
                            args[2], null, null, queue.configSchema().validate(Map.of())));
        }
    }

    @Test
    void aUrlThatIsNotNatsIsRefusedWithItsReason() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new NatsQueue(config("http://127.0.0.1:4222", RUN)));
        assertTrue(e.getMessage().contains("nats://host:port"), e.getMessage());
    }

    @Test
    void aNatsThatDoesNotAnswerFailsTheActivationWithItsReason() {
        assertThrows(java.io.IOException.class, () -> new NatsQueue(config("nats://127.0.0.1:9", RUN)));
    }

    /**
     * The server's answer to a receive comes late (a loaded machine): the receive waits for it, up to the request
     * timeout. Waiting a fixed second, as jnats' own fetch does, lost such a delivery: the server counted it as
     * handed out, nobody got it, and it stayed hidden until the ack wait ran out.
     */
    @Test
    void aDeliveryThatArrivesLateIsHandedOutNotHiddenUntilTheAckWait() throws Exception {
        TestResourceContext r = newResource(Map.of());
        provider.send(r, "late".getBytes(StandardCharsets.UTF_8), null);
        URI nats = URI.create(NATS);
        try (DelayingRelay relay = new DelayingRelay(nats.getHost(), nats.getPort(), Duration.ZERO)) {
            NatsQueue slow = new NatsQueue(config("nats://127.0.0.1:" + relay.port(), RUN, 8000));
            try {
                // connected without delay (the handshake's answers 1.5 s late each took 3 s of the test); late from
                // here on: the receive's answers
                relay.delay(Duration.ofMillis(1500));
                List<QueueMessage> got = slow.receive(r, 5, Duration.ofSeconds(30));
                assertEquals(1, got.size(), "the delivery arrived 1.5 s after the pull");
                assertEquals("late", new String(got.get(0).body(), StandardCharsets.UTF_8));
                assertTrue(provider.ack(r, got.get(0).receipt()));
            } finally {
                slow.close();
            }
        }
    }
}
