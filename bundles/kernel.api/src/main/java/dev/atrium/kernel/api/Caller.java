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
    private final java.time.Instant authenticatedAt;
    private final Set<String> authenticationMethods;

    Caller(
            KernelMint mint,
            String principalId,
            String authMethod,
            Set<String> scopes,
            java.time.Instant authenticatedAt,
            Set<String> authenticationMethods) {
        this.mint = mint;
        this.principalId = principalId;
        this.authMethod = Objects.requireNonNull(authMethod, "authMethod");
        this.scopes = Set.copyOf(scopes);
        this.authenticatedAt = authenticatedAt;
        this.authenticationMethods = authenticationMethods == null ? Set.of() : Set.copyOf(authenticationMethods);
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

    /**
     * When the person behind this caller last proved who they are (a browser session: its sign-in), or null when the
     * credential says nothing about it (tokens).
     *
     * @since 2.5
     */
    public java.time.Instant authenticatedAt() {
        return authenticatedAt;
    }

    /**
     * How they proved it, as RFC 8176 authentication method references ({@code pwd}; {@code fed} for an external
     * identity provider); empty when unknown.
     *
     * @since 2.5
     */
    public Set<String> authenticationMethods() {
        return authenticationMethods;
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
