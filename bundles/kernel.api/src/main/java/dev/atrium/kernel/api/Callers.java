package dev.atrium.kernel.api;

import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Callers for work done later on a Principal's behalf, outside the request that asked for it (a run acting for its
 * requester). The kernel answers each bundle separately and lets only the bundles its configuration names act for
 * others ({@code dev.atrium.runs} by default): any other capability is refused.
 *
 * @since 2.0
 */
@ProviderType
public interface Callers {

    /** The {@link Caller#authMethod()} of a caller made by {@link #actingFor}. */
    String ACTING_FOR = "run";

    /**
     * @param principalId the Principal the work is for (a run's recorded requester)
     * @param scopes      what the work may do; never {@link Caller#ALL_SCOPES}
     * @return a caller for the Principal with auth method {@value #ACTING_FOR}, proven again: the Principal exists and
     *         is active
     * @throws ApiException 404 when the Principal does not exist or is not active; 403 when the calling bundle may not
     *                      act for others or asks for every scope
     */
    Caller actingFor(String principalId, Set<String> scopes);
}
