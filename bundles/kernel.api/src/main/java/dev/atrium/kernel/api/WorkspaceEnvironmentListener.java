package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Told by the kernel after a workspace's common environment variable was set or deleted (committed), so that code
 * using it can be given the new value. A whiteboard service; called on the request's thread, on the instance that made
 * the change only.
 */
@ConsumerType
public interface WorkspaceEnvironmentListener {

    void commonVariableChanged(String spaceId, String name);
}
