package dev.atrium.resource.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A secret ({@code secretRef}): a value the owner writes through a {@linkplain ConfigSchema.Builder#secret secret}
 * config field and that no API ever returns. Only the core calls {@link #reveal}, to hand the value to what the resource
 * is bound to (a service's environment); a provider keeps the value encrypted at rest.
 *
 * @since 1.1
 */
@ConsumerType
public interface SecretFacet {

    /**
     * The secret's current value.
     *
     * @throws ResourceException {@link ResourceException.Kind#UNAVAILABLE} when the key that encrypted it is gone
     */
    byte[] reveal(ResourceContext ctx) throws ResourceException;
}
