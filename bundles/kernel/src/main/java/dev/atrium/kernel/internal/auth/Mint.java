package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.KernelMint;
import dev.atrium.kernel.api.SpaceRef;
import java.util.HashSet;
import java.util.Set;

/**
 * The kernel's one mint of {@link Caller}s and {@link SpaceRef}s. A constant, not a service: a registered service
 * object could be found in the registry and its public methods invoked reflectively by any bundle.
 */
public final class Mint extends KernelMint {

    public static final Mint KERNEL = new Mint();

    public static final String PAT = "pat";
    public static final String SESSION = "session";
    public static final String OPERATOR = "operator";
    /** Methods only the kernel grants: a {@code TokenVerifier} may not claim them. */
    public static final Set<String> KERNEL_METHODS =
            Set.of(PAT, SESSION, OPERATOR, dev.atrium.kernel.api.Callers.ACTING_FOR);

    private Mint() {}

    public Caller pat(String principalId, Set<String> scopes) {
        return caller(principalId, PAT, scopes);
    }

    /** A browser session: the user themself, with every scope, and when and how they signed in. */
    public Caller session(String principalId, java.time.Instant authenticatedAt, Set<String> methods) {
        return caller(principalId, SESSION, Set.of(Caller.ALL_SCOPES), authenticatedAt, methods);
    }

    /** The operator: no Principal, no scope. */
    public Caller operator() {
        return caller(null, OPERATOR, Set.of());
    }

    /** A caller of a capability-issued token: never every scope, only those named. */
    public Caller verified(String principalId, String authMethod, Set<String> scopes) {
        Set<String> named = new HashSet<>(scopes == null ? Set.of() : scopes);
        named.remove(Caller.ALL_SCOPES);
        return caller(principalId, authMethod, named);
    }

    public Caller actingFor(String principalId, Set<String> scopes) {
        return caller(principalId, dev.atrium.kernel.api.Callers.ACTING_FOR, scopes);
    }

    /** {@code provenFor}: the Principal the owner scope proved it for, null for a directory lookup. */
    public SpaceRef workspace(
            String id,
            String slug,
            String ownerPrincipalId,
            String securityPosture,
            boolean isDefault,
            String provenFor) {
        return space(id, slug, ownerPrincipalId, securityPosture, isDefault, provenFor);
    }

    /** Whether the kernel made {@code caller}: anything else is refused as unauthenticated. */
    public boolean genuine(Caller caller) {
        return minted(caller);
    }

    public boolean genuine(SpaceRef space) {
        return minted(space);
    }

    public boolean isOperator(Caller caller) {
        return minted(caller) && caller.principalId() == null && OPERATOR.equals(caller.authMethod());
    }
}
