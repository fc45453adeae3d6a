package dev.atrium.resource.queue.nats.internal;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.atrium.resource.api.QueueFacetContract;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;

/** The queue contract on the NATS JetStream at 127.0.0.1:4222 (ATRIUM_TEST_NATS overrides), under stream and subject prefixes of its own. */
class NatsQueueTest extends QueueFacetContract {

    static final String NATS = System.getenv().getOrDefault("ATRIUM_TEST_NATS", "nats://127.0.0.1:4222");
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static NatsQueue provider;

    static NatsQueueConfig config(String url, String run) {
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
                return 2000;
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
        TestResourceContext r = new TestResourceContext(null, null, provider.configSchema().validate(config));
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
            consumeOneAndHang(queue, new TestResourceContext(args[2], null, null, queue.configSchema().validate(Map.of())));
        }
    }

    @Test
    void aUrlThatIsNotNatsIsRefusedWithItsReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new NatsQueue(config("http://127.0.0.1:4222", RUN)));
        assertTrue(e.getMessage().contains("nats://host:port"), e.getMessage());
    }

    @Test
    void aNatsThatDoesNotAnswerFailsTheActivationWithItsReason() {
        assertThrows(java.io.IOException.class, () -> new NatsQueue(config("nats://127.0.0.1:9", RUN)));
    }
}
