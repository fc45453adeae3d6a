package dev.atrium.kernel.api;

/**
 * A workspace the kernel vouches for: returned by {@link OwnerScope#require} (proven owned by
 * {@link #provenFor()}) and by {@link SpaceDirectory} (found by a public name, proven for nobody). Only the kernel
 * makes one (through its {@link KernelMint}), so a capability cannot forge a proven workspace; a capability API that
 * takes a {@code SpaceRef} instead of a raw id takes the kernel's proof.
 */
public final class SpaceRef {

    final KernelMint mint;
    private final String id;
    private final String slug;
    private final String ownerPrincipalId;
    private final String securityPosture;
    private final boolean isDefault;
    private final String provenFor;

    SpaceRef(
            KernelMint mint,
            String id,
            String slug,
            String ownerPrincipalId,
            String securityPosture,
            boolean isDefault,
            String provenFor) {
        this.mint = mint;
        this.id = id;
        this.slug = slug;
        this.ownerPrincipalId = ownerPrincipalId;
        this.securityPosture = securityPosture;
        this.isDefault = isDefault;
        this.provenFor = provenFor;
    }

    /** The workspace id. */
    public String id() {
        return id;
    }

    public String slug() {
        return slug;
    }

    /** The one Principal that owns it. */
    public String ownerPrincipalId() {
        return ownerPrincipalId;
    }

    /** {@code standard} or {@code restricted_egress}. */
    public String securityPosture() {
        return securityPosture;
    }

    /** Whether it is its owner's default workspace. */
    public boolean isDefault() {
        return isDefault;
    }

    /**
     * The Principal the owner scope proved it for (its owner), or null for a workspace {@link SpaceDirectory} found
     * by a public name: such a reference names the workspace but proves no caller may touch it.
     */
    public String provenFor() {
        return provenFor;
    }

    /** Whether the owner scope proved this workspace for {@code caller}. */
    public boolean provenFor(Caller caller) {
        return caller != null && provenFor != null && provenFor.equals(caller.principalId());
    }

    @Override
    public String toString() {
        return "SpaceRef[" + id + " " + slug + "]";
    }
}
