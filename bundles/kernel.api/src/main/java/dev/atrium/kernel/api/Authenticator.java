package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Authenticates a secret presented outside the JAX-RS pipeline (the password of Git's HTTP Basic
 * authentication, a WebSocket handshake). Inside JAX-RS the kernel has already done this and resources read
 * {@link Caller#from(javax.ws.rs.core.SecurityContext)}.
 */
@ProviderType
public interface Authenticator {

    /**
     * @param secret a personal access token or a token a registered {@link TokenVerifier} owns
     * @return the caller, always with a Principal
     * @throws ApiException 401 when the secret is unknown, expired or revoked; 403 when its Principal is suspended
     */
    Caller authenticate(String secret);
}
