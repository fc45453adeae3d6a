package dev.atrium.store.ap.api;

import java.net.URI;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The outgoing queue: an activity to a remote inbox, delivered signed by a local actor, retried with exponential backoff
 * while the peer fails, and kept as a dead letter (visible to the operator) after the last attempt. The queue is in
 * PostgreSQL: it survives restarts, and several instances share it without sending twice.
 */
@ProviderType
public interface Deliveries {

    /**
     * Queues {@code activity} (the exact JSON bytes to POST) to {@code inbox}, signed as {@code actorUri}.
     *
     * @return the delivery's id
     */
    String enqueue(String actorUri, URI inbox, byte[] activity);
}
