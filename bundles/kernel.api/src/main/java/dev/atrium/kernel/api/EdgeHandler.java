package dev.atrium.kernel.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.osgi.service.component.annotations.ComponentPropertyType;

/**
 * Names a Jetty {@code org.eclipse.jetty.server.Request.Handler} service that the kernel's edge calls for every request,
 * after its own steps (a stopping server's 503, the request id) and before the servlet whiteboard: {@code handle}
 * returns true for a request it answers, false to pass it on. Handlers are called in the order of their names, never of
 * a service ranking; a name is unique (the later registration of a name is ignored and logged). A handler runs on
 * Jetty's thread and must not block it on anything slow.
 *
 * <p>The property is {@code atrium.edge.handler}.
 */
@ComponentPropertyType
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.TYPE)
public @interface EdgeHandler {

    String PREFIX_ = "atrium.";

    /** The service property that names an edge handler. */
    String PROPERTY = "atrium.edge.handler";

    /** The handler's name, which orders it among the others. */
    String value();
}
