package dev.atrium.resource.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A message queue ({@code queue}) with at-least-once delivery: a received message is hidden for its visibility
 * timeout; acknowledged in time, it is gone; otherwise it is delivered again, and after the configured number of
 * attempts it moves to the dead-letter list.
 */
@ConsumerType
public interface QueueFacet {

    /**
     * Enqueues a message.
     *
     * @param delay how long before it may be received, or null for at once
     * @return the message id
     */
    String send(ResourceContext ctx, byte[] body, Duration delay) throws ResourceException;

    /**
     * Takes up to {@code max} visible messages and hides them for {@code visibilityTimeout}.
     *
     * @param max 1–100
     */
    List<QueueMessage> receive(ResourceContext ctx, int max, Duration visibilityTimeout) throws ResourceException;

    /**
     * Acknowledges a received message by its receipt.
     *
     * @return false when the receipt is unknown or its visibility timeout passed (the message may be delivered again)
     */
    boolean ack(ResourceContext ctx, String receipt) throws ResourceException;

    /** Messages that used all their attempts, oldest first. */
    List<QueueMessage> deadLetters(ResourceContext ctx, int limit) throws ResourceException;

    /**
     * A delivered message.
     *
     * @param receipt  what {@link #ack} takes; valid for this delivery only
     * @param attempts how often it was delivered, this time included
     */
    record QueueMessage(String id, byte[] body, String receipt, int attempts, Instant enqueuedAt) {}
}
