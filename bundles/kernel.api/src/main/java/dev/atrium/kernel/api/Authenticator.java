package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Authenticates a secret presented outside the JAX-RS pipeline (the password of Git's HTTP Basic
 * authentication, a WebSocket handshake, an event stream). Inside JAX-RS the kernel has already done this and resources read
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

    /**
     * Authenticates a reading request (GET or HEAD) served outside JAX-RS the way the kernel authenticates one inside
     * it: by its {@code Authorization: Bearer} token when it has one, else by the browser session cookie
     * ({@link SessionVerifier#COOKIE}) in its {@code Cookie} header. Never use it for a request that changes
     * something: a cookie-authenticated change also needs the CSRF check of the JAX-RS path.
     *
     * @param authorization the {@code Authorization} header, or null
     * @param cookies the {@code Cookie} header, or null
     * @return the caller (always with a Principal), or null when the request carries no credential at all
     * @throws ApiException 401 when the header is not a bearer token or the token or session is unknown, expired or
     *         revoked; 403 when its Principal is suspended
     * @since 1.3
     */
    Caller authenticateReading(String authorization, String cookies);

    /**
     * Authenticates an HTML form's POST served outside JAX-RS (a page that must work without JavaScript, which cannot
     * send the {@link SessionVerifier#CSRF_HEADER} header): by the browser session cookie in {@code cookies}, and only
     * when {@code csrfToken}, a field of the form, is that session's CSRF token.
     *
     * @return the session's caller, or null when the request has no live session or the token is missing or wrong
     * @throws ApiException 403 when the session's Principal is suspended
     * @since 2.5
     */
    Caller authenticateSessionForm(String cookies, String csrfToken);

    /**
     * Tells the kernel that a change the calling bundle has just committed may take access away (a session ended, a
     * token revoked), so that what the kernel keeps about callers is forgotten on this instance now; other instances
     * forget it when the database's notification reaches them.
     *
     * @since 2.1
     */
    default void accessChanged() {}
}
