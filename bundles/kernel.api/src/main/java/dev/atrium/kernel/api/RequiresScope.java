package dev.atrium.kernel.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares the scope a resource method (or every method of a resource class) needs. The kernel answers
 * 403 {@code FORBIDDEN} to a caller whose token lacks it. Unannotated methods need only authentication.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface RequiresScope {
    String value();
}
