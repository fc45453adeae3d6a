package dev.atrium.kernel.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The kernel neither reads the {@code Authorization} header nor the session cookie of requests to this resource
 * class or method: it authenticates them itself, in its own protocol (the OAuth token endpoint's HTTP Basic client
 * authentication and its {@code invalid_client} answers, the sign-in pages). Errors it throws are still mapped.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface SelfAuthenticated {}
