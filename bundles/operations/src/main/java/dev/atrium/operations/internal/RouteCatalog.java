package dev.atrium.operations.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.http.runtime.HttpServiceRuntime;
import org.osgi.service.http.runtime.dto.ServletContextDTO;
import org.osgi.service.http.runtime.dto.ServletDTO;
import org.osgi.service.jaxrs.runtime.JaxrsServiceRuntime;
import org.osgi.service.jaxrs.runtime.dto.ApplicationDTO;
import org.osgi.service.jaxrs.runtime.dto.ResourceDTO;
import org.osgi.service.jaxrs.runtime.dto.ResourceMethodInfoDTO;

/**
 * Every route the running server answers, read from the whiteboards' runtime DTOs rather than from a list someone
 * keeps: JAX-RS resource methods (method, path, media types), plain servlets (their patterns), and the paths a
 * whiteboard filter serves itself when it names them in the service property {@value #FILTER_ROUTES} (a page served
 * in front of the JAX-RS servlet, which takes every path), each with the bundle that registered it. The route-wide test sweep walks this list, so a new capability is swept without
 * anyone naming its routes.
 */
@Component(service = RouteCatalog.class)
public class RouteCatalog {

    /** The whiteboard's own servlet that hosts JAX-RS applications: its routes are the resources, listed apart. */
    static final String JAXRS_WHITEBOARD_BSN = "org.apache.aries.jax.rs.whiteboard";

    /** The service property of a whiteboard filter that lists the paths it answers itself (listed like a servlet's). */
    static final String FILTER_ROUTES = "atrium.routes";

    /**
     * One route. {@code method} is null for a servlet (it answers whatever methods it implements); {@code serviceId}
     * is the service that registered it (0 when unknown).
     */
    public record Route(
            String kind,
            String method,
            String path,
            List<String> consumes,
            List<String> produces,
            String bundle,
            long serviceId) {

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", kind);
            m.put("method", method);
            m.put("path", path);
            m.put("consumes", consumes);
            m.put("produces", produces);
            m.put("bundle", bundle);
            return m;
        }
    }

    private final BundleContext context;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile JaxrsServiceRuntime jaxrs;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile HttpServiceRuntime http;

    @Activate
    public RouteCatalog(BundleContext context) {
        this.context = context;
    }

    public List<Route> routes() {
        List<Route> routes = new ArrayList<>();
        String jaxrsContextPath = "";
        HttpServiceRuntime httpRuntime = http;
        if (httpRuntime != null) {
            for (ServletContextDTO sc : httpRuntime.getRuntimeDTO().servletContextDTOs) {
                for (ServletDTO servlet : sc.servletDTOs) {
                    String bundle = bundleOf(servlet.serviceId);
                    for (String pattern : servlet.patterns) {
                        if (JAXRS_WHITEBOARD_BSN.equals(bundle)) {
                            // the whiteboard's application servlet: remember where it is mounted, list its resources
                            // below
                            jaxrsContextPath = sc.contextPath == null ? "" : sc.contextPath;
                            continue;
                        }
                        routes.add(new Route(
                                "servlet",
                                null,
                                join(sc.contextPath, pattern),
                                List.of(),
                                List.of(),
                                bundle,
                                servlet.serviceId));
                    }
                }
                for (var filter : sc.filterDTOs) {
                    ServiceReference<?> ref = reference(filter.serviceId);
                    Object paths = ref == null ? null : ref.getProperty(FILTER_ROUTES);
                    for (String path : paths instanceof String[] a
                            ? a
                            : paths instanceof String s ? new String[] {s} : new String[0]) {
                        routes.add(new Route(
                                "servlet",
                                null,
                                join(sc.contextPath, path),
                                List.of(),
                                List.of(),
                                ref.getBundle().getSymbolicName(),
                                filter.serviceId));
                    }
                }
            }
        }
        JaxrsServiceRuntime jaxrsRuntime = jaxrs;
        if (jaxrsRuntime != null) {
            var dto = jaxrsRuntime.getRuntimeDTO();
            List<ApplicationDTO> apps = new ArrayList<>(Arrays.asList(dto.applicationDTOs));
            if (dto.defaultApplication != null) {
                apps.add(dto.defaultApplication);
            }
            for (ApplicationDTO app : apps) {
                for (ResourceDTO resource : app.resourceDTOs) {
                    String bundle = bundleOf(resource.serviceId);
                    for (ResourceMethodInfoDTO m : resource.resourceMethods) {
                        routes.add(new Route(
                                "jaxrs",
                                m.method,
                                join(jaxrsContextPath, app.base, m.path),
                                list(m.consumingMimeType),
                                list(m.producingMimeType),
                                bundle,
                                resource.serviceId));
                    }
                }
            }
        }
        routes.sort(Comparator.comparing(Route::path).thenComparing(r -> r.method() == null ? "" : r.method()));
        return routes;
    }

    /**
     * Joins URI path pieces with exactly one slash between them: {@code join("", "/", "/api/x")} is {@code /api/x}.
     * A null or empty piece adds nothing; the result always starts with a slash and never ends with one (but "/").
     */
    static String join(String... parts) {
        StringBuilder out = new StringBuilder();
        for (String part : parts) {
            if (part == null) {
                continue;
            }
            for (String segment : part.split("/")) {
                if (!segment.isEmpty()) {
                    out.append('/').append(segment);
                }
            }
        }
        return out.length() == 0 ? "/" : out.toString();
    }

    private static List<String> list(String[] values) {
        return values == null ? List.of() : List.of(values);
    }

    private String bundleOf(long serviceId) {
        ServiceReference<?> ref = reference(serviceId);
        return ref == null ? null : ref.getBundle().getSymbolicName();
    }

    /**
     * A value that changes whenever {@link #routes()} may: each whiteboard raises its runtime's
     * {@code service.changecount} on every change of what it serves, and a runtime that restarts has a new service id.
     */
    String revision() {
        return revision(JaxrsServiceRuntime.class) + "/" + revision(HttpServiceRuntime.class);
    }

    private String revision(Class<?> runtime) {
        ServiceReference<?> ref = context.getServiceReference(runtime);
        return ref == null
                ? "none"
                : ref.getProperty(Constants.SERVICE_ID) + "." + ref.getProperty(Constants.SERVICE_CHANGECOUNT);
    }

    ServiceReference<?> reference(long serviceId) {
        try {
            ServiceReference<?>[] refs = context.getAllServiceReferences(null, "(service.id=" + serviceId + ")");
            return refs == null || refs.length == 0 || refs[0].getBundle() == null ? null : refs[0];
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
