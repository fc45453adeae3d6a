package dev.atrium.kernel.api;

/**
 * A workspace the caller has been proven to own, as returned by {@link OwnerScope#require}.
 *
 * @param id               the workspace id
 * @param slug             its slug
 * @param ownerPrincipalId the one Principal that owns it
 * @param securityPosture  {@code standard} or {@code restricted_egress}
 * @param isDefault        whether it is its owner's default workspace
 */
public record SpaceRef(String id, String slug, String ownerPrincipalId, String securityPosture, boolean isDefault) {
}
