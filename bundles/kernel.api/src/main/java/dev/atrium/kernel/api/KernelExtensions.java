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

    /**
     * The request attribute in which the kernel names the template of the route that serves a request (class and
     * method {@code @Path}, as {@code /api/repos/{repoId}/star}), for figures that must not count paths one by one.
     *
     * @since 2.16
     */
    public static final String ROUTE_ATTRIBUTE = "atrium.route";

    /**
     * The response header naming the bundle and version that served a request ({@code dev.atrium.repos/1.4.0}).
     *
     * @since 2.16
     */
    public static final String SERVED_BY_HEADER = "X-Atrium-Bundle";

    private KernelExtensions() {}
}
