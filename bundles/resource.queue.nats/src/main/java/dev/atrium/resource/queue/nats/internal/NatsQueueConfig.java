package dev.atrium.resource.queue.nats.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "Atrium queue resources on NATS JetStream")
public @interface NatsQueueConfig {

    @AttributeDefinition(
            description =
                    "The NATS server, nats://[user:password@]host:port (tls:// for TLS); JetStream must be enabled")
    String url();

    @AttributeDefinition(description = "Connect and request timeout in milliseconds")
    int timeoutMillis() default 5000;

    @AttributeDefinition(
            description =
                    "Prefix of every stream this provider creates (one per queue, one more per queue's dead letters)")
    String streamPrefix() default "ATRIUM_QUEUE_";

    @AttributeDefinition(description = "Prefix of every subject this provider publishes to")
    String subjectPrefix() default "atrium.queue.";

    @AttributeDefinition(
            description =
                    "How long a message stays hidden when it was handed out but never hid itself: a consumer crashed "
                            + "between taking it and setting its visibility timeout, or it was still on its way when the receive ended, in seconds")
    int ackWaitSeconds() default 5;
}
