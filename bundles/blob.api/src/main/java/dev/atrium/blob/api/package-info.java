/**
 * Blobs: immutable byte sequences named by their content, kept by whichever {@link dev.atrium.blob.api.BlobStore}
 * the operator installed (the filesystem by default, an S3-compatible store as a plug-in). A capability that keeps
 * files (workspace storage, r2 objects, release assets) writes their bytes here and keeps only the key.
 */
@org.osgi.annotation.versioning.Version("1.1.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.blob.api;
