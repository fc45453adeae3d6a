package dev.atrium.kernel.api;

import java.util.Collection;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A workspace's common environment variables ({@code PUT /api/spaces/:spaceId/common-env}), read by the capability
 * that runs the workspace's code, for that code only: secret values included, so never to be put in an answer.
 * Changes are told to every {@link WorkspaceEnvironmentListener}.
 */
@ProviderType
public interface WorkspaceEnvironment {

    /**
     *Returns the value of each of {@code names} the workspace has (a name it does not have is absent), in the order
     * of {@code names}.
     * @param space a workspace the kernel named ({@link OwnerScope} or {@link SpaceDirectory})
     * @param names the variables wanted
     *
     */
    Map<String, String> values(SpaceRef space, Collection<String> names);
}
