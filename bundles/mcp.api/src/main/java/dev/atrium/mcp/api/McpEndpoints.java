package dev.atrium.mcp.api;

import dev.atrium.kernel.api.SpaceRef;
import org.osgi.annotation.versioning.ProviderType;

/**
 * MCP servers that a capability registers in a workspace on its owner's behalf, marked as managed by it: they are
 * listed, enabled and offered to runs like the owner's, but only their manager changes or removes them (the routes
 * answer 409 naming it). The caller has proven the workspace through the kernel ({@link SpaceRef}).
 */
@ProviderType
public interface McpEndpoints {

    /**
     * Registers the server {@code name} at {@code url} (Streamable HTTP) in {@code space} for {@code manager} (for
     * example {@code app-group:<id>}), or points the one it registered under that name before at {@code url}; answers
     * the server's id, the same for the same name.
     *
     * @throws IllegalStateException when the workspace has a server of that name its owner or another manager
     *     registered, or has as many servers as it may
     * @throws IllegalArgumentException when {@code name} or {@code url} is not one a server may have
     */
    String register(SpaceRef space, String manager, String name, String url);

    /** Removes the server {@code serverId} of {@code space} if {@code manager} registered it; false when it did not. */
    boolean remove(SpaceRef space, String manager, String serverId);
}
