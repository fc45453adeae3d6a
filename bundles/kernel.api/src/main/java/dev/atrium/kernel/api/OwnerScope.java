package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The only authority on who may touch a workspace. Capability bundles call it before reading or
 * writing anything that belongs to a workspace, including objects addressed by their own id.
 */
@ProviderType
public interface OwnerScope {

    /**
     * Proves in one query that the caller's Principal is active, the workspace is active and owned by
     * it, and an active owner witness names both.
     *
     * @param caller          the authenticated caller
     * @param spaceIdOrSlug   a workspace id or slug
     * @return the workspace, {@link SpaceRef#provenFor() proven for} the caller's Principal
     * @throws ApiException 404 {@code NOT_FOUND} when any part of the proof fails, exactly as for a
     *                      workspace that does not exist; a caller the kernel did not make fails the proof
     */
    SpaceRef require(Caller caller, String spaceIdOrSlug);
}
