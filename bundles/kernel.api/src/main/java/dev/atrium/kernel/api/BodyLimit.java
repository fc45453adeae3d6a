package dev.atrium.kernel.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The largest request body a resource method (or every method of a resource class) accepts, in bytes, when it
 * takes more than the kernel's limit for every body (1 MiB by default): an upload of a Git bundle, an archive, a
 * bundle jar. The kernel refuses a larger body with 413 {@code PAYLOAD_TOO_LARGE}, by its Content-Length before the
 * method runs and while the method reads a chunked one. Text bodies (JSON, forms, plain text) stay under the
 * kernel's limit whatever a route declares: the kernel reads and checks them whole before the route.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface BodyLimit {

    /** The largest body in bytes. */
    long value();
}
