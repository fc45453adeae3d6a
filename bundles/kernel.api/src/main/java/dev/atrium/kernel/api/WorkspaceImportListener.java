package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Told once a workspace archive has been restored into a new workspace, after every part. Restored content keeps its
 * archived times, so it sorts before anything a change cursor already passed: a bundle that follows one (workspace
 * search) reads the new workspace from the start here. Called in the importing request's thread: hand the work on.
 */
@ConsumerType
public interface WorkspaceImportListener {

    void imported(SpaceRef space);
}
