/**
 * What storage lets other capabilities contribute and use: {@link dev.atrium.storage.api.FileHandlerSource}, the file
 * handlers (which app opens which files) of a workspace, and {@link dev.atrium.storage.api.WorkspaceFiles}, files written
 * into a workspace's storage on its owner's behalf.
 */
@org.osgi.annotation.versioning.Version("1.1.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.storage.api;
