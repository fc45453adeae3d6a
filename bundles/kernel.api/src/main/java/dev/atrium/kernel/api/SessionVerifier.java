package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Verifies browser session cookies (the spec's session-cookie mode). The kernel consults it for a request to a
 * JAX-RS resource that carries no {@code Authorization} header but the cookie {@link #COOKIE}. A
 * cookie-authenticated request with a method other than GET, HEAD or OPTIONS must also send the session's CSRF
 * token in the header {@link #CSRF_HEADER}, or the kernel answers 403.
 */
@ConsumerType
public interface SessionVerifier {

    /** The session cookie's name. */
    String COOKIE = "atrium_session";

    /**
     * The cookie the sign-in sets beside the session's, readable by the server's own pages: its value is the session's
     * CSRF token, which a page's script sends in {@link #CSRF_HEADER} and a plain form as a field.
     *
     * @since 2.5
     */
    String CSRF_COOKIE = "atrium_csrf";

    /** The request header that carries the session's CSRF token on mutating requests. */
    String CSRF_HEADER = "X-CSRF-Token";

    /**
     * A live session: the Principal it is for and its CSRF token. The kernel checks the Principal is active and makes
     * its {@link Caller} (auth method {@code session}, every scope), and keeps what it proves no longer than
     * {@code expiresAt} (null: no end of its own).
     *
     * {@code authenticatedAt} is when the person signed in (the session's start) and {@code methods} how, as RFC 8176
     * values; the kernel gives both to the session's {@link Caller}.
     *
     * @since 2.0
     */
    record Session(
            String principalId,
            String csrfToken,
            java.time.Instant expiresAt,
            java.time.Instant authenticatedAt,
            java.util.Set<String> methods) {

        /** A session that does not say when or how its person signed in. */
        public Session(String principalId, String csrfToken, java.time.Instant expiresAt) {
            this(principalId, csrfToken, expiresAt, null, java.util.Set.of());
        }
    }

    /**
     *Returns the live session of the cookie's value, or {@code null} when it is unknown, expired or ended; the kernel
     * answers 403 when its Principal is suspended.
     *
     */
    Session verify(String cookieValue);
}
