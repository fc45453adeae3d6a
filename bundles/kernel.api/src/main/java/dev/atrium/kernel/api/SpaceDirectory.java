package dev.atrium.kernel.api;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Finds workspaces by public names, without a caller: Git's {@code /git/:owner/:repo.git} names its owner by
 * a username or a workspace slug, and anonymous clones of public repositories have no caller at all. It only
 * names the workspace ({@link SpaceRef#provenFor()} is null); reading private data still goes through {@link OwnerScope}.
 */
@ProviderType
public interface SpaceDirectory {

    /**
     *Returns the workspace when its Principal is active, the workspace is active and an active owner witness
     * names both; empty otherwise.
     * @param usernameOrSlug a workspace slug, or a username standing for that Principal's default workspace
     *
     */
    Optional<SpaceRef> byOwnerName(String usernameOrSlug);

    /** As {@link #byOwnerName(String)}, by workspace id. */
    Optional<SpaceRef> byId(String spaceId);
}
