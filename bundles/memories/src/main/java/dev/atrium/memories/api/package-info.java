/**
 * The memories capability as a service for other capabilities (an agent's memory tool). Callers must have
 * proven the workspace through the kernel's {@code OwnerScope} first; the service trusts the id it is given.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.memories.api;
