package dev.atrium.resource.api;

import java.time.Duration;
import java.util.UUID;

/**
 * What a queue resource accepts, on every backend: its config ({@link #SCHEMA}) and the bounds of a message, a delay,
 * a visibility timeout, a receive and a listing. Every {@link QueueFacet} provider checks its calls with these, so a
 * queue behaves alike on PostgreSQL, NATS or a third party's backend.
 *
 * @since 1.6
 */
public final class QueueLimits {

    public static final long MAX_HIDE_MILLIS = Duration.ofHours(12).toMillis();

    public static final ConfigSchema SCHEMA = ConfigSchema.builder()
            .integer("max_deliveries", "deliveries of a message before it moves to the dead letters", 1, 100, 5)
            .integer("max_message_bytes", "largest message body accepted", 1, 1_048_576, 262_144)
            .build();

    /** A queue's configuration. */
    private record Config(int maxDeliveries, long maxMessageBytes) {}

    private QueueLimits() {}

    public static int maxDeliveries(ResourceContext ctx) {
        return SCHEMA.read(ctx.config(), Config.class).maxDeliveries();
    }

    public static void checkBody(ResourceContext ctx, byte[] body) throws ResourceException {
        if (body == null) {
            throw ResourceException.badInput("a message needs a body");
        }
        long most = SCHEMA.read(ctx.config(), Config.class).maxMessageBytes();
        if (body.length > most) {
            throw new ResourceException(
                    ResourceException.Kind.TOO_LARGE,
                    "the message has " + body.length + " bytes; this queue takes at most " + most);
        }
    }

    public static long checkDelay(Duration delay) throws ResourceException {
        if (delay == null) {
            return 0;
        }
        if (delay.isNegative() || delay.toMillis() > MAX_HIDE_MILLIS) {
            throw ResourceException.badInput("delay must be between 0 and 12 hours");
        }
        return delay.toMillis();
    }

    public static long checkVisibility(Duration timeout) throws ResourceException {
        if (timeout == null || timeout.toMillis() < 1 || timeout.toMillis() > MAX_HIDE_MILLIS) {
            throw ResourceException.badInput("the visibility timeout must be between 1 millisecond and 12 hours");
        }
        return timeout.toMillis();
    }

    public static void checkMax(int max) throws ResourceException {
        if (max < 1 || max > 100) {
            throw ResourceException.badInput("a receive takes 1 to 100 messages, not " + max);
        }
    }

    public static void checkLimit(int limit) throws ResourceException {
        if (limit < 1 || limit > 1000) {
            throw ResourceException.badInput("limit must be between 1 and 1000, not " + limit);
        }
    }

    public static UUID parseReceipt(String receipt) throws ResourceException {
        try {
            if (receipt == null || receipt.length() != 36) {
                throw new IllegalArgumentException();
            }
            return UUID.fromString(receipt);
        } catch (IllegalArgumentException e) {
            throw ResourceException.badInput("receipt is not one this queue handed out");
        }
    }
}
