package dev.atrium.kernel.internal.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.http.runtime.HttpServiceRuntime;
import org.osgi.service.jaxrs.runtime.JaxrsServiceRuntime;
import org.osgi.service.jaxrs.runtime.dto.ResourceDTO;
import org.osgi.service.jaxrs.runtime.dto.ResourceMethodInfoDTO;
import org.osgi.service.jaxrs.runtime.dto.RuntimeDTO;

/**
 * Whether the JAX-RS application that answers requests right now is the rebuilt one: Aries lists a resource in its
 * runtime DTO before the application it rebuilds serves it, so the update gate asks the application itself. Each
 * resource registered since the gate closed is sent an {@code OPTIONS} request on one of its paths (past the closed
 * gate, with {@link #HEADER}); any answer but the "no route" 404 of an application that does not have it means the
 * live application has it. When no resource is new (a bundle only stopped) or a path cannot be made, it says no and
 * the gate falls back to waiting for the whiteboard to settle.
 */
@Component(service = WhiteboardProbe.class)
public class WhiteboardProbe {

    /** The header that lets a probe past the closed update gate; its value is this instance's secret. */
    static final String HEADER = "X-Atrium-Gate-Probe";

    private final BundleContext context;
    private final String secret = UUID.randomUUID().toString();
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile JaxrsServiceRuntime jaxrs;

    @Activate
    public WhiteboardProbe(BundleContext context) {
        this.context = context;
    }

    boolean isProbe(String headerValue) {
        return secret.equals(headerValue);
    }

    /** The service ids of every JAX-RS resource registered now. */
    Set<Long> resources() {
        Set<Long> ids = new HashSet<>();
        try {
            ServiceReference<?>[] refs = context.getAllServiceReferences(null, "(osgi.jaxrs.resource=true)");
            if (refs != null) {
                for (ServiceReference<?> r : refs) {
                    ids.add((Long) r.getProperty("service.id"));
                }
            }
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        return ids;
    }

    /**
     * Whether every resource not in {@code before} is served by the live application: TRUE when each answers, FALSE
     * when one still meets an application without it, null when there is nothing to ask (no resource is new, one has
     * no path to ask, or the runtime is not there).
     */
    Boolean newResourcesServed(Set<Long> before) {
        JaxrsServiceRuntime runtime = jaxrs;
        String base = endpoint();
        if (runtime == null || base == null) {
            return null;
        }
        RuntimeDTO dto;
        try {
            dto = runtime.getRuntimeDTO();
        } catch (RuntimeException changing) {
            return Boolean.FALSE;
        }
        List<ResourceDTO> fresh = new ArrayList<>();
        if (dto.defaultApplication != null) {
            for (ResourceDTO r : dto.defaultApplication.resourceDTOs) {
                if (!before.contains(r.serviceId)) {
                    fresh.add(r);
                }
            }
        }
        if (fresh.isEmpty()) {
            return null;
        }
        for (ResourceDTO r : fresh) {
            String path = path(r);
            if (path == null) {
                return null;
            }
            if (!answers(base + path)) {
                return Boolean.FALSE;
            }
        }
        return Boolean.TRUE;
    }

    /**
     * The resources of the default application the live application does not answer yet, asked one request each, except
     * those in {@code verified} (which gains every one that answers, and loses those no longer registered). Null when
     * there is nothing to ask with (no runtime, no endpoint, or the DTO is changing). A resource with no path to ask
     * counts as answering.
     */
    List<String> unanswered(Set<Long> verified) {
        JaxrsServiceRuntime runtime = jaxrs;
        String base = endpoint();
        if (runtime == null || base == null) {
            return null;
        }
        RuntimeDTO dto;
        try {
            dto = runtime.getRuntimeDTO();
        } catch (RuntimeException changing) {
            return null;
        }
        if (dto.defaultApplication == null) {
            return null;
        }
        Set<Long> registered = new HashSet<>();
        List<String> missing = new ArrayList<>();
        for (ResourceDTO r : dto.defaultApplication.resourceDTOs) {
            registered.add(r.serviceId);
            if (verified.contains(r.serviceId)) {
                continue;
            }
            String path = path(r);
            if (path == null || answers(base + path)) {
                verified.add(r.serviceId);
            } else {
                missing.add(r.name == null ? "service " + r.serviceId : r.name);
            }
        }
        verified.retainAll(registered);
        return missing;
    }

    private boolean answers(String url) {
        try {
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                            .header(HEADER, secret)
                            .timeout(Duration.ofSeconds(2))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return !(response.statusCode() == 404 && response.body().contains("no route for"));
        } catch (java.io.IOException | IllegalArgumentException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** One of the resource's paths with every template variable filled in, or null. */
    static String path(ResourceDTO r) {
        if (r.resourceMethods == null) {
            return null;
        }
        for (ResourceMethodInfoDTO m : r.resourceMethods) {
            if (m.path != null && !m.path.isEmpty()) {
                String p = m.path.replaceAll("\\{[^}]*\\}", "0").replaceAll("/+", "/");
                return p.startsWith("/") ? p : "/" + p;
            }
        }
        return null;
    }

    /**
     * Where this server listens over plain HTTP, from the HTTP runtime ({@code http://127.0.0.1:8080/}), without its
     * trailing slash. A plain endpoint is preferred: the probe's client does not trust the server's own certificate,
     * and since the kernel's listener replaces Felix's, an HTTPS listener of Felix's comes first in the list.
     */
    private String endpoint() {
        ServiceReference<HttpServiceRuntime> ref = context.getServiceReference(HttpServiceRuntime.class);
        Object e = ref == null ? null : ref.getProperty("osgi.http.endpoint");
        String[] all = e instanceof String[] a ? a : e instanceof String s ? new String[] {s} : new String[0];
        String first = null;
        for (String candidate : all) {
            if (candidate.startsWith("http://")) {
                first = candidate;
                break;
            }
        }
        if (first == null && all.length > 0) {
            first = all[0];
        }
        if (first == null) {
            return null;
        }
        first = first.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://127.0.0.1:");
        return first.endsWith("/") ? first.substring(0, first.length() - 1) : first;
    }
}
