package dev.atrium.operations.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PublicUrls;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.GET;
import javax.ws.rs.HttpMethod;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.UriInfo;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The API reference of the running server: {@code /api/openapi.json}, an OpenAPI 3.1 document of every route
 * {@code /admin/routes} lists, and {@code /api/docs}, the same as a page. Made from what runs, so an enabled
 * capability's routes appear and a disabled one's go, with no list anyone keeps. Open to anyone, as the routes
 * themselves say which need a sign-in. Made once per change of the routes (and per public address): building it takes a
 * few hundred milliseconds of CPU, which an anonymous client must not be able to ask for at will.
 */
@Component(service = ApiDescription.class)
@KernelResource
@Path("/api")
@Anonymous
public class ApiDescription {

    private final RouteCatalog routes;
    private final PublicUrls urls;
    private final String version;

    /** The document (and its page, once asked for) of one routes revision and public address. */
    private record Made(String key, Map<String, Object> document, String page) {}

    private volatile Made made;

    @Activate
    public ApiDescription(@Reference RouteCatalog routes, @Reference PublicUrls urls, BundleContext context) {
        this.routes = routes;
        this.urls = urls;
        this.version = context.getBundle().getVersion().toString();
    }

    @GET
    @Path("openapi.json")
    @Produces(MediaType.APPLICATION_JSON)
    @JsonShape(OperationsJson.OpenApi.class)
    public Map<String, Object> openApi(@Context UriInfo uri) {
        return made(uri, false).document();
    }

    @GET
    @Path("docs")
    @Produces(MediaType.TEXT_HTML + ";charset=utf-8")
    public String docs(@Context UriInfo uri) {
        return made(uri, true).page();
    }

    /** The current document, made again only when the routes or the address changed; one request makes it at a time. */
    private Made made(UriInfo uri, boolean page) {
        String base = urls.base(uri.getBaseUri());
        String key = routes.revision() + " " + base;
        Made current = made;
        if (current != null && current.key().equals(key) && (!page || current.page() != null)) {
            return current;
        }
        synchronized (this) {
            current = made;
            if (current == null || !current.key().equals(key)) {
                current = new Made(key, OpenApiDocument.of(routes.routes(), this::javaMethod, version, base), null);
            }
            if (page && current.page() == null) {
                current = new Made(key, current.document(), ApiDocsPage.html(current.document()));
            }
            made = current;
            return current;
        }
    }

    /** The resource method that answers a JAX-RS route: same HTTP method, and its class and method paths end the route's path. */
    private Optional<Method> javaMethod(RouteCatalog.Route route) {
        ServiceReference<?> ref = route.serviceId() == 0 ? null : routes.reference(route.serviceId());
        if (ref == null) {
            return Optional.empty();
        }
        Class<?> type;
        try {
            Object name = ref.getProperty("component.name");
            type = ref.getBundle()
                    .loadClass(name instanceof String s ? s : ((String[]) ref.getProperty("objectClass"))[0]);
        } catch (ClassNotFoundException | RuntimeException e) {
            return Optional.empty();
        }
        String routePath = OpenApiDocument.template(route.path());
        Path classPath = type.getAnnotation(Path.class);
        Method best = null;
        int bestScore = -1;
        for (Method m : type.getMethods()) {
            if (!route.method().equals(httpMethod(m))) {
                continue;
            }
            Path methodPath = m.getAnnotation(Path.class);
            String path = OpenApiDocument.template(RouteCatalog.join(
                    classPath == null ? "" : classPath.value(), methodPath == null ? "" : methodPath.value()));
            // join gives "/…": a suffix match falls on a segment boundary; "/" (no path at all) is the weakest match.
            // Of two methods on one path (a JSON answer and an event stream), the JSON one describes the route:
            // getMethods() has no order to rely on.
            int score = path.length() * 2 + (answersJson(m) ? 1 : 0);
            if ((path.equals("/") || routePath.endsWith(path)) && score > bestScore) {
                best = m;
                bestScore = score;
            }
        }
        return Optional.ofNullable(best);
    }

    private static boolean answersJson(Method m) {
        Produces p = m.getAnnotation(Produces.class);
        if (p == null) {
            p = m.getDeclaringClass().getAnnotation(Produces.class);
        }
        return p == null || java.util.Arrays.stream(p.value()).anyMatch(t -> t.contains("json") || t.equals("*/*"));
    }

    private static String httpMethod(Method m) {
        for (var a : m.getAnnotations()) {
            HttpMethod h = a.annotationType().getAnnotation(HttpMethod.class);
            if (h != null) {
                return h.value();
            }
        }
        return null;
    }
}
