package dev.atrium.billing.api;

import java.time.Instant;
import java.util.Objects;

/**
 * One metered action.
 *
 * @param spaceId        the workspace the action was for; its owner is the Principal billed
 * @param meter          one of {@link Meters}
 * @param dimension      what the meter is split by (a model, a resource id), or empty
 * @param quantity       how much, at least 0
 * @param idempotencyKey unique per action: recording the same key twice counts once (a retried action, a replay)
 * @param occurredAt     when it happened
 */
public record UsageEvent(
        String spaceId, String meter, String dimension, long quantity, String idempotencyKey, Instant occurredAt) {

    public UsageEvent {
        Objects.requireNonNull(spaceId, "spaceId");
        Objects.requireNonNull(meter, "meter");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        dimension = dimension == null ? "" : dimension;
        occurredAt = occurredAt == null ? Instant.now() : occurredAt;
        if (quantity < 0) {
            throw new IllegalArgumentException("quantity must not be negative");
        }
        if (idempotencyKey.isEmpty() || idempotencyKey.length() > 200) {
            throw new IllegalArgumentException("idempotencyKey must have 1 to 200 characters");
        }
    }
}
