package dev.atrium.resource.kv.redis.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "Atrium kv resources on Redis")
public @interface RedisKvConfig {

    @AttributeDefinition(
            description = "The Redis server, redis://[user:password@]host:port[/database] (rediss:// for TLS)")
    String url();

    @AttributeDefinition(description = "At most this many connections to Redis")
    int poolSize() default 64;

    @AttributeDefinition(description = "Connect and read timeout in milliseconds")
    int timeoutMillis() default 2000;

    @AttributeDefinition(
            description =
                    "Prefix of every Redis key this provider writes, so a Redis shared with other programs stays tidy")
    String keyPrefix() default "atrium:kv:";
}
