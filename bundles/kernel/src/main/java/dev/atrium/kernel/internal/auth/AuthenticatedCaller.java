package dev.atrium.kernel.internal.auth;

import java.util.Set;

import dev.atrium.kernel.api.Caller;

/** A caller the kernel has authenticated. The operator has no Principal. */
public record AuthenticatedCaller(String principalId, String authMethod, Set<String> scopes, String credentialId)
        implements Caller {

    public static final String OPERATOR = "operator";

    public static AuthenticatedCaller operator() {
        return new AuthenticatedCaller(null, OPERATOR, Set.of(), null);
    }

    public boolean isOperator() {
        return OPERATOR.equals(authMethod);
    }

    @Override
    public String getName() {
        return principalId == null ? OPERATOR : principalId;
    }
}
