package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Caller;
import java.time.Instant;
import java.util.Set;

/**
 * When and how the user proved who they are before approving a grant: OpenID Connect's {@code auth_time} and
 * {@code amr}, carried from the approval to every ID token of the grant.
 */
record Authentication(Instant at, Set<String> methods) {

    Authentication {
        methods = methods == null ? Set.of() : Set.copyOf(methods);
    }

    /**
     * The caller's sign-in; a personal access token says nothing of one, and presenting it is itself the
     * authentication, so that counts as now with no method named.
     */
    static Authentication of(Caller caller) {
        return caller.authenticatedAt() != null
                ? new Authentication(caller.authenticatedAt(), caller.authenticationMethods())
                : new Authentication(Instant.now(), Set.of());
    }

    /** The {@code amr} column: space-separated, null when none. */
    String amrColumn() {
        return methods.isEmpty() ? null : String.join(" ", new java.util.TreeSet<>(methods));
    }

    /** From the {@code auth_time} and {@code amr} columns; null for a grant made before they were recorded. */
    static Authentication fromColumns(Instant at, String amr) {
        return at == null
                ? null
                : new Authentication(
                        at,
                        amr == null || amr.isBlank()
                                ? Set.of()
                                : Set.of(amr.trim().split(" ")));
    }
}
