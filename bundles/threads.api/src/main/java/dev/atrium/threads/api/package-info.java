/**
 * Threads as a service for other capabilities (agent runs): find a thread the caller may touch, read its
 * timeline, append to it.
 */
@org.osgi.annotation.versioning.Version("2.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.threads.api;
