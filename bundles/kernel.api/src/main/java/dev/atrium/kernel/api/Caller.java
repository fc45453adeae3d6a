package dev.atrium.kernel.api;

import java.security.Principal;
import java.util.Set;

import javax.ws.rs.core.SecurityContext;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The authenticated party of a request: a Principal and how it proved itself. The kernel puts it in the
 * JAX-RS {@link SecurityContext}; resources read it with {@link #from(SecurityContext)}.
 */
@ProviderType
public interface Caller extends Principal {

    /** The scope value that grants every scope. */
    String ALL_SCOPES = "*";

    /** The Principal's id; never null for a caller that reaches a capability's resource. */
    String principalId();

    /** {@code pat}, {@code session}, {@code oauth} or {@code operator}. */
    String authMethod();

    Set<String> scopes();

    default boolean hasScope(String scope) {
        return scopes().contains(ALL_SCOPES) || scopes().contains(scope);
    }

    /** The caller of this request; 401 when the request is not authenticated as a Principal. */
    static Caller from(SecurityContext context) {
        if (context != null && context.getUserPrincipal() instanceof Caller caller && caller.principalId() != null) {
            return caller;
        }
        throw ApiException.unauthorized("authentication required");
    }
}
