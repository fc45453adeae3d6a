package dev.atrium.kernel.api;

import java.util.Set;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkUtil;

/**
 * The one way to make a {@link Caller} or a {@link SpaceRef}. Package-private access does not cross bundles (each
 * bundle has its own class loader, hence its own runtime package), so the kernel reaches the two constructors
 * through this class: it can only be instantiated by a subclass in the kernel's bundle ({@value #KERNEL}). A
 * capability that subclasses it fails in the constructor; one that obtains an instance some other way (a resurrected
 * half-constructed object) finds it refuses to mint. Capabilities never use this class.
 */
public abstract class KernelMint {

    /** The symbolic name of the only bundle whose subclasses may mint. */
    public static final String KERNEL = "dev.atrium.kernel";

    private final boolean kernel;

    protected KernelMint() {
        requireKernel(getClass());
        this.kernel = true;
    }

    private static void requireKernel(Class<?> type) {
        Bundle api = FrameworkUtil.getBundle(KernelMint.class);
        if (api == null) {
            return; // not inside an OSGi framework (a unit test's class path): there are no other bundles to guard
            // against
        }
        Bundle owner = FrameworkUtil.getBundle(type);
        if (owner == null || !KERNEL.equals(owner.getSymbolicName())) {
            throw new SecurityException("only the kernel mints callers and workspace references, not "
                    + (owner == null ? type.getName() : owner.getSymbolicName()));
        }
    }

    private void check() {
        if (!kernel) {
            throw new SecurityException("this mint was never constructed");
        }
    }

    /** A caller authenticated by the kernel: {@code principalId} null only for the operator. */
    protected final Caller caller(String principalId, String authMethod, Set<String> scopes) {
        check();
        return new Caller(this, principalId, authMethod, scopes, null, null);
    }

    /**
     * A caller whose credential records when and how the person authenticated (a browser session).
     *
     * @since 2.5
     */
    protected final Caller caller(
            String principalId,
            String authMethod,
            Set<String> scopes,
            java.time.Instant authenticatedAt,
            Set<String> authenticationMethods) {
        check();
        return new Caller(this, principalId, authMethod, scopes, authenticatedAt, authenticationMethods);
    }

    /** A workspace reference; {@code provenFor} is the Principal the owner scope proved it for, or null. */
    protected final SpaceRef space(
            String id,
            String slug,
            String ownerPrincipalId,
            String securityPosture,
            boolean isDefault,
            String provenFor) {
        check();
        return new SpaceRef(this, id, slug, ownerPrincipalId, securityPosture, isDefault, provenFor);
    }

    /** Whether this mint made {@code caller}: false for null, for one made by another mint or by reflection. */
    protected final boolean minted(Caller caller) {
        return caller != null && caller.mint == this && kernel;
    }

    /** Whether this mint made {@code space}. */
    protected final boolean minted(SpaceRef space) {
        return space != null && space.mint == this && kernel;
    }
}
