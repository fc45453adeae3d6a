package dev.atrium.services.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A whiteboard service told after the services capability published a routing table on this instance (a domain
 * verified or removed, a service deleted, here or on another instance): a bundle that keeps something per route, such
 * as the certificates it serves, looks again.
 *
 * @since 1.1
 */
@ConsumerType
public interface RoutesListener {

    /** Called on the thread that published the table: hand long work to a thread of your own. */
    void routesPublished();
}
