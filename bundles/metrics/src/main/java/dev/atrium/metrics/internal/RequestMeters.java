package dev.atrium.metrics.internal;

import dev.atrium.kernel.api.EdgeHandler;
import dev.atrium.kernel.api.KernelExtensions;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Times every request from the kernel's edge to the last byte of its answer ({@code http_server_requests_seconds}),
 * labelled by method, the route's template (which the kernel's JAX-RS gate names), the status class and the capability
 * that answered. The labels have few values by construction: no path, id, user or workspace is ever one.
 */
@Component(service = Request.Handler.class)
@EdgeHandler("metrics.requests")
public class RequestMeters implements Request.Handler {

    static final String NAME = "http.server.requests";
    private static final Set<String> METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "MKCOL", "MOVE", "COPY");
    private static final String CAPABILITY_PREFIX = "dev.atrium.";
    /** Buckets a person notices: the spec's latency targets sit between 20 ms and 1 s. */
    private static final Duration[] BUCKETS = {
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(25),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofMillis(250),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofMillis(2500),
        Duration.ofSeconds(5),
        Duration.ofSeconds(10),
        Duration.ofSeconds(30)
    };

    private static final String[] STATUS_CLASSES = {"none", "1xx", "2xx", "3xx", "4xx", "5xx"};

    /**
     * A timer's labels. Not a record: a record's hashCode and equals go through method handles, which a profile under
     * load showed on every request; this one hashes once and compares the (mostly identical) strings by reference
     * first.
     */
    private static final class Key {
        final String method;
        final String route;
        final String status;
        final String capability;
        private final int hash;

        Key(String method, String route, String status, String capability) {
            this.method = method;
            this.route = route;
            this.status = status;
            this.capability = capability;
            hash = ((method.hashCode() * 31 + route.hashCode()) * 31 + status.hashCode()) * 31 + capability.hashCode();
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k
                    && k.hash == hash
                    && same(k.route, route)
                    && same(k.method, method)
                    && same(k.status, status)
                    && same(k.capability, capability);
        }

        @SuppressWarnings("ReferenceEquality") // the same interned label is the usual case; equals decides the rest
        private static boolean same(String a, String b) {
            return a == b || a.equals(b);
        }
    }

    private final Metrics metrics;
    private final Map<Key, Timer> timers = new ConcurrentHashMap<>();
    /** Served-by header values (a bundle and its version: few) and their capability label. */
    private final Map<String, String> capabilities = new ConcurrentHashMap<>();

    @Activate
    public RequestMeters(@Reference Metrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        if (!metrics.enabled()) {
            return false;
        }
        long start = System.nanoTime();
        request.addHttpStreamWrapper(stream -> new HttpStream.Wrapper(stream) {
            @Override
            public void succeeded() {
                record(request, response, start);
                super.succeeded();
            }

            @Override
            public void failed(Throwable x) {
                record(request, response, start);
                super.failed(x);
            }
        });
        return false;
    }

    private void record(Request request, Response response, long start) {
        long took = System.nanoTime() - start;
        Key key = new Key(
                method(request.getMethod()),
                route(request.getAttribute(KernelExtensions.ROUTE_ATTRIBUTE)),
                statusClass(response.getStatus()),
                capabilityOf(response.getHeaders().get(KernelExtensions.SERVED_BY_HEADER)));
        timers.computeIfAbsent(key, this::timer).record(took, TimeUnit.NANOSECONDS);
    }

    private String capabilityOf(String servedBy) {
        return servedBy == null ? "none" : capabilities.computeIfAbsent(servedBy, RequestMeters::capability);
    }

    private Timer timer(Key k) {
        return Timer.builder(NAME)
                .description("Requests by route template, status class and capability, to the answer's last byte")
                .tag("method", k.method)
                .tag("route", k.route)
                .tag("status", k.status)
                .tag("capability", k.capability)
                .serviceLevelObjectives(BUCKETS)
                .register(metrics.registry());
    }

    static String method(String method) {
        return METHODS.contains(method) ? method : "OTHER";
    }

    static String route(Object template) {
        return template instanceof String s && !s.isEmpty() ? s : "none";
    }

    static String statusClass(int status) {
        return status >= 100 && status < 600 ? STATUS_CLASSES[status / 100] : "none";
    }

    /** {@code dev.atrium.repos/1.4.0} (the kernel's served-by header) is the capability {@code repos}. */
    static String capability(String servedBy) {
        if (servedBy == null || servedBy.isEmpty()) {
            return "none";
        }
        int slash = servedBy.indexOf('/');
        String name = slash < 0 ? servedBy : servedBy.substring(0, slash);
        return name.startsWith(CAPABILITY_PREFIX) ? name.substring(CAPABILITY_PREFIX.length()) : name;
    }
}
