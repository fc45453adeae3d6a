package dev.atrium.kernel.api;

/**
 * JAX-RS whiteboard names of the kernel's extensions. Every capability resource selects both
 * {@link #SELECT} and {@link #JSON}, so that it is served only while the kernel authenticates and maps
 * errors and JSON can be read and written: {@link KernelResource} does both.
 */
public final class KernelExtensions {

    /** The kernel's authentication, scope and error-mapping extension. */
    public static final String NAME = "atrium.kernel";

    public static final String SELECT = "(osgi.jaxrs.name=" + NAME + ")";

    /** The JSON media type extension (Jackson). */
    public static final String JSON = "(osgi.jaxrs.media.type=application/json)";

    private KernelExtensions() {}
}
