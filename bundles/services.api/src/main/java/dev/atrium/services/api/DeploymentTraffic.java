package dev.atrium.services.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * What the requests routed to a running deployment got, as the bundle that routes services' hosts saw them on this
 * server: a rollout gates its canary on the new version's share of server errors.
 *
 * @since 1.3
 */
@ProviderType
public interface DeploymentTraffic {

    /**
     * @param requests     requests routed to the deployment since this server began routing to it
     * @param serverErrors those it answered with a 5xx status, or did not answer
     */
    record Counts(long requests, long serverErrors) {
        public static final Counts NONE = new Counts(0, 0);
    }

    /** The counts of the deployment whose runtime id is {@code runtimeId} ({@link ServiceRoutes.Route#runtimeId}). */
    Counts counts(String runtimeId);
}
