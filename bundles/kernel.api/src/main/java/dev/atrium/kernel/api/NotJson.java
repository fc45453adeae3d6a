package dev.atrium.kernel.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A resource method whose success answer is not JSON although nothing else says so (no {@code @Produces}, or one that
 * lists JSON for its errors): an HTML page, a redirect, a file, or no body at all. The API reference
 * ({@code /api/openapi.json}) describes the answer with it; content negotiation does not change.
 *
 * @since 2.11
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface NotJson {

    /** The media types of the answer's body; none when it has none (a redirect, 202 or 204). */
    String[] value() default {};
}
