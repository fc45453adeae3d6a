package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Credentials of Principals a bundle keeps besides the kernel's personal access tokens (browser sessions, OAuth
 * tokens), registered as a service so that the operator's {@code POST /admin/users/:username/revoke-tokens} ends them
 * all. Whiteboard: the kernel calls every registered one.
 *
 * @since 2.17
 */
@ConsumerType
public interface PrincipalCredentials {

    /** What they are, as the answer names them: {@code sessions}, {@code oauth_tokens}. */
    String kind();

    /**
     * Ends every live credential of Principal {@code principalId} this bundle keeps, so none of them authenticates
     * again on any instance (the change must reach the kernel's access triggers), and answers how many it ended.
     */
    int revokeAll(String principalId);
}
