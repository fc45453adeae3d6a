/**
 * What storage lets other capabilities contribute: {@link dev.atrium.storage.api.FileHandlerSource}, the file handlers
 * (which app opens which files) of a workspace.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.storage.api;
