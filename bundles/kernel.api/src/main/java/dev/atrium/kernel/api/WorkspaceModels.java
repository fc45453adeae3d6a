package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The model a workspace has chosen for its agents ({@code GET /api/spaces/:spaceId/model}), read by the
 * capability that runs them. The read is proven exactly as {@link OwnerScope#require} proves access.
 */
@ProviderType
public interface WorkspaceModels {

    /**
     * @param caller        the caller (for a run: a caller built for the run's recorded requester)
     * @param spaceIdOrSlug a workspace id or slug
     * @return the workspace's choice; either part may be null when not set
     * @throws ApiException 404 {@code NOT_FOUND} as {@link OwnerScope#require} does
     */
    Choice model(Caller caller, String spaceIdOrSlug);

    /** @param model the model name; {@code provider} {@code openai}, {@code anthropic}, … */
    record Choice(String model, String provider) {}
}
