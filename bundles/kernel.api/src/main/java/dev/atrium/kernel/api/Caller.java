package dev.atrium.kernel.api;

import java.security.Principal;
import java.util.Objects;
import java.util.Set;

import javax.ws.rs.core.SecurityContext;

/**
 * The authenticated party of a request: a Principal and how it proved itself. Only the kernel makes one (through
 * its {@link KernelMint}), so holding a {@code Caller} means the kernel authenticated it: a capability cannot
 * construct, subclass or implement one. The kernel puts it in the JAX-RS {@link SecurityContext}; resources read it
 * with {@link #from(SecurityContext)}; a run acting for its requester gets one from {@link Callers}.
 */
public final class Caller implements Principal {

    /** The scope value that grants every scope. */
    public static final String ALL_SCOPES = "*";

    final KernelMint mint;
    private final String principalId;
    private final String authMethod;
    private final Set<String> scopes;

    Caller(KernelMint mint, String principalId, String authMethod, Set<String> scopes) {
        this.mint = mint;
        this.principalId = principalId;
        this.authMethod = Objects.requireNonNull(authMethod, "authMethod");
        this.scopes = Set.copyOf(scopes);
    }

    /** The Principal's id; never null for a caller that reaches a capability's resource (null for the operator). */
    public String principalId() {
        return principalId;
    }

    /** {@code pat}, {@code session}, {@code oauth}, {@code run} or {@code operator}. */
    public String authMethod() {
        return authMethod;
    }

    public Set<String> scopes() {
        return scopes;
    }

    public boolean hasScope(String scope) {
        return scopes.contains(ALL_SCOPES) || scopes.contains(scope);
    }

    @Override
    public String getName() {
        return principalId == null ? authMethod : principalId;
    }

    /** The caller of this request; 401 when the request is not authenticated as a Principal. */
    public static Caller from(SecurityContext context) {
        if (context != null && context.getUserPrincipal() instanceof Caller caller && caller.principalId() != null) {
            return caller;
        }
        throw ApiException.unauthorized("authentication required");
    }

    @Override
    public String toString() {
        return "Caller[" + getName() + " by " + authMethod + " " + scopes + "]";
    }
}
