package dev.atrium.resource.kv.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.KvFacetContract;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;
import java.lang.annotation.Annotation;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The kv contract on the Redis at 127.0.0.1:6379 (ATRIUM_TEST_REDIS overrides), under a key prefix of its own. */
class RedisKvTest extends KvFacetContract {

    static final String REDIS = System.getenv().getOrDefault("ATRIUM_TEST_REDIS", "redis://127.0.0.1:6379/0");
    private static final String PREFIX = "atrium-test:" + UUID.randomUUID() + ":";
    private static RedisKv provider;

    static RedisKvConfig config(String url, String prefix) {
        return new RedisKvConfig() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return RedisKvConfig.class;
            }

            @Override
            public String url() {
                return url;
            }

            @Override
            public int poolSize() {
                return 16;
            }

            @Override
            public int timeoutMillis() {
                return 2000;
            }

            @Override
            public String keyPrefix() {
                return prefix;
            }
        };
    }

    @BeforeAll
    static void connect() {
        provider = new RedisKv(config(REDIS, PREFIX));
    }

    @AfterAll
    static void close() {
        provider.close();
    }

    @Override
    protected ResourceProvider provider() {
        return provider;
    }

    @Override
    protected TestResourceContext newResource() {
        return new TestResourceContext(null, null, Map.of());
    }

    @Test
    void aUrlThatIsNotRedisIsRefusedWithItsReason() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> new RedisKv(config("http://127.0.0.1:6379", PREFIX)));
        assertTrue(e.getMessage().contains("redis://host:port"), e.getMessage());
    }

    @Test
    void aRedisThatDoesNotAnswerIsUnavailableNotAnError() throws Exception {
        RedisKv nowhere = new RedisKv(config("redis://127.0.0.1:9/0", PREFIX));
        try {
            TestResourceContext r = newResource();
            assertEquals(false, nowhere.health(r).healthy());
            ResourceException e = assertThrows(ResourceException.class, () -> nowhere.get(r, "k"));
            assertEquals(ResourceException.Kind.UNAVAILABLE, e.kind());
        } finally {
            nowhere.close();
        }
    }
}
