package dev.atrium.kernel.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.osgi.service.component.annotations.ComponentPropertyType;
import org.osgi.service.jaxrs.whiteboard.annotations.RequireJaxrsWhiteboard;

/**
 * Marks a DS component as a capability's JAX-RS resource served through the kernel: the whiteboard serves it only while
 * the kernel's extension (authentication, scope, the spec's errors) and the JSON media type are there. One annotation
 * for what every resource said in two ({@code @JaxrsResource} and
 * {@code @JaxrsExtensionSelect({KernelExtensions.SELECT, KernelExtensions.JSON})}), so that a resource cannot forget
 * the kernel's half. A component property type: bnd writes its properties into the component's description.
 */
@ComponentPropertyType
@RequireJaxrsWhiteboard
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.TYPE)
public @interface KernelResource {

    String PREFIX_ = "osgi.jaxrs.";

    /** {@code osgi.jaxrs.resource}: a whiteboard resource. */
    boolean resource() default true;

    /** {@code osgi.jaxrs.extension.select}: the kernel's extension and JSON. */
    String[] extension_select() default {KernelExtensions.SELECT, KernelExtensions.JSON};
}
