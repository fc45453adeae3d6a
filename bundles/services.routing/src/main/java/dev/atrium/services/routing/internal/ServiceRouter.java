package dev.atrium.services.routing.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.deploy.api.DeploymentProvider;
import dev.atrium.kernel.api.HostRouter;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.Keepsakes;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.RelayRouter;
import dev.atrium.kernel.api.ServerReadiness;
import dev.atrium.services.api.DeploymentTraffic;
import dev.atrium.services.api.ServiceRoutes;
import dev.atrium.services.api.ServiceRoutes.Route;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Host routing, in front of the API (a {@link HostRouter} the kernel's envelope hands its requests to, and holds them for
 * while this bundle is updated): a request whose Host is {@code <slug>.<apps domain>} or a verified custom domain is proxied to the service's running
 * deployment ({@link DeploymentProvider#endpoint}), the canary chosen per request by its share; bodies stream both ways
 * (a blocking pass-through on the request's thread over pooled keep-alive connections, {@link Upstream}); a WebSocket
 * upgrade is relayed to the worker's WebSocket ({@link WorkerWebSockets}). An unknown name under the apps domain is
 * 404 with the spec body; every other Host goes on to the API (or, under {@code /internal/bindings/}, to the binding
 * gateway's router). Until the services capability has published its first routing table ({@link ServiceRoutes}) after a start, requests wait for it (bounded), so a new revision of this bundle never answers "no service" for a
 * service that runs.
 *
 * <p>A request on the services' HTTPS listener (marked with {@link ServiceRoutes#SNI_ATTRIBUTE}) is for a
 * verified custom domain only: its Host must be the name its TLS connection asked for (else 421, as the certificate
 * served was for another name), and a Host that is not a routed custom domain is 404 with the spec body; neither the
 * API nor the internal binding endpoint answers there.
 */
@Component(
        service = {HostRouter.class, RelayRouter.class, DeploymentTraffic.class},
        property = ServiceRoutes.HOST_ROUTER_PROPERTY + "=true")
public class ServiceRouter implements HostRouter, RelayRouter, DeploymentTraffic {

    private static final Logger LOG = LoggerFactory.getLogger(ServiceRouter.class);
    private static final ObjectMapper JSON = JsonMappers.create();
    private static final String SNI_ATTRIBUTE = ServiceRoutes.SNI_ATTRIBUTE;

    private final ServiceRoutes services;
    private final Upstream upstream;
    private final BundleContext context;
    /** Null when Jetty's WebSocket bundles are not in the runtime: then an upgrade to a worker is 501. */
    private final WorkerWebSockets webSockets;

    private final String apps;
    private final String dotApps;
    private final Map<URI, Target> targets = new ConcurrentHashMap<>();
    private final TrafficCounts traffic = new TrafficCounts();
    private final RequestMetering metering = new RequestMetering();
    private final ScheduledExecutorService meteringFlush = NamedThreads.scheduler("services-request-metering");

    /** Where the requests served are counted for billing; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    private final java.util.concurrent.atomic.AtomicLong counted = new java.util.concurrent.atomic.AtomicLong();
    /** The verified custom domains when this router started, claimed until the first routing table. */
    private final Set<String> domainsAtStart;

    private final ServerReadiness readiness;

    @Activate
    public ServiceRouter(@Reference ServiceRoutes services, @Reference ServerReadiness readiness, BundleContext context)
            throws Exception {
        this.services = services;
        this.readiness = readiness;
        this.context = context;
        Keepsakes.loadClassesNow(context.getBundle(), "dev/atrium/services/routing");
        this.upstream = new Upstream();
        this.webSockets = webSockets();
        // the configuration does not change under a component: a new one replaces the services' component, and so this
        // one
        this.apps = services.appsDomain();
        this.dotApps = "." + apps;
        Set<String> domains;
        try {
            domains = services.verifiedDomainNames();
        } catch (RuntimeException e) {
            LOG.warn(
                    "services: the custom domains could not be read at start; they are routed once the routing table is: {}",
                    e.toString());
            domains = Set.of();
        }
        this.domainsAtStart = Set.copyOf(domains);
        NamedThreads.repeat(meteringFlush, this::flushMetering, Duration.ofSeconds(1), Duration.ofSeconds(1));
    }

    private void flushMetering() {
        metering.flush(usage, services.routes().byRuntimeId());
    }

    private static WorkerWebSockets webSockets() {
        try {
            return new WorkerWebSockets();
        } catch (LinkageError missing) {
            LOG.info(
                    "services: WebSockets to services are off; Jetty's WebSocket bundles are not in the runtime: {}",
                    missing.toString());
            return null;
        } catch (Exception failed) {
            LOG.warn("services: WebSockets to services are off; the WebSocket client did not start", failed);
            return null;
        }
    }

    /** On a restart of this capability the relayed WebSockets stay open (the workers keep running); otherwise they close. */
    @Deactivate
    void deactivate() throws InterruptedException {
        closed = true;
        meteringFlush.shutdown();
        meteringFlush.awaitTermination(5, TimeUnit.SECONDS);
        try {
            flushMetering();
        } catch (RuntimeException e) {
            LOG.warn("services: the last second's request counts were not written: {}", e.toString());
        }
        upstream.close();
        if (webSockets != null) {
            if (Keepsakes.restarting(context)) {
                webSockets.drain();
            } else {
                webSockets.close();
            }
        }
    }

    /** Claims of the routing table they were made from; rebuilt when the services capability publishes another. */
    private record ClaimsOf(ServiceRoutes.Routes routes, Claims claims) {}

    private volatile ClaimsOf claims;
    /**
     * Set when this router is deactivated (after the kernel stopped handing it requests): a request that reached it
     * just before is handed back rather than answered from an emptied routing table. Proxied requests under way finish
     * ({@link Upstream#close} closes idle connections only).
     */
    private volatile boolean closed;

    @Override
    @SuppressWarnings("ReferenceEquality") // whether the table is the same one, not an equal one
    public Claims claims() {
        ClaimsOf c = claims;
        ServiceRoutes.Routes routes = services.routes();
        if (c == null || c.routes() != routes) {
            // before the first table (a start) the custom domains come from the store, so none falls through to the API
            Set<String> hosts =
                    new HashSet<>(services.hasRoutes() ? routes.byDomain().keySet() : domainsAtStart);
            hosts.add(apps);
            c = new ClaimsOf(routes, new Claims(hosts, Set.of(dotApps), Set.of(), Set.of(SNI_ATTRIBUTE)));
            claims = c;
        }
        return c.claims();
    }

    @Override
    public boolean route(HttpServletRequest request, HttpServletResponse response)
            throws IOException, ServletException {
        String host = host(request.getHeader("Host"));
        Object sni = request.getAttribute(SNI_ATTRIBUTE);
        if (closed) {
            return false;
        }
        if (!services.awaitRoutes(FIRST_ROUTES_WAIT_MILLIS)) {
            if (closed) {
                return false;
            }
            response.setHeader("Retry-After", "5");
            error(response, 503, "SERVICE_UNAVAILABLE", "the services' routing table is not loaded yet; try again");
            return true;
        }
        ServiceRoutes.Routes routes = services.routes();
        if (closed) {
            return false; // the table may be the emptied one
        }
        if (sni != null) {
            secure(routes, host, sni.toString(), request, response, request, response);
            return true;
        }
        Route route = null;
        if (host != null && host.endsWith(dotApps)) {
            String slug = host.substring(0, host.length() - apps.length() - 1);
            route = slug.contains(".") ? null : routes.bySlug().get(slug);
            if (route == null) {
                error(response, 404, "NOT_FOUND", "no service answers at " + host);
                return true;
            }
        } else if (host != null && host.equals(apps)) {
            error(response, 404, "NOT_FOUND", "no service answers at " + host + "; services answer at <slug>." + apps);
            return true;
        } else if (host != null) {
            route = routes.byDomain().get(host);
        }
        if (route != null) {
            proxy(byPath(route, request), request, response, request, response);
        } else {
            // a custom domain claimed a moment ago and no longer routed
            error(response, 404, "NOT_FOUND", "no service answers at " + host);
        }
        return true;
    }

    /** How long a request waits, after a start of this bundle, for the first routing table. */
    private static final long FIRST_ROUTES_WAIT_MILLIS = 10_000;

    /** A request on the HTTPS listener: a verified custom domain's, named the same in TLS and in Host, or an error. */
    private void secure(
            ServiceRoutes.Routes routes,
            String host,
            String sni,
            HttpServletRequest request,
            HttpServletResponse response,
            ServletRequest req,
            ServletResponse res)
            throws IOException {
        if (host == null) {
            error(response, 400, "BAD_REQUEST", "a request needs a Host header");
            return;
        }
        if (!host.equals(sni)) {
            error(
                    response,
                    421,
                    "MISDIRECTED_REQUEST",
                    "this connection is for " + (sni.isEmpty() ? "no name" : sni) + ", not " + host
                            + "; connect again for " + host);
            return;
        }
        Route route = routes.byDomain().get(host);
        if (route == null) {
            error(response, 404, "NOT_FOUND", "no service answers at " + host);
            return;
        }
        proxy(byPath(route, request), request, response, req, res);
    }

    /**
     * The kernel's edge relays a request itself when it can go straight to a running deployment: an apps host or a
     * custom domain on the plain listener, routed now, its provider present and its deployment running. Everything
     * else (an unknown host's 404, a provider being updated, the first routing table still loading, an ACME
     * challenge) is declined and reaches {@link #route(HttpServletRequest, HttpServletResponse)} as before.
     */
    @Override
    public Relay route(String host, String method, String target) {
        if (closed || !services.hasRoutes() || target.startsWith(ACME_CHALLENGES)) {
            return null;
        }
        ServiceRoutes.Routes routes = services.routes();
        Route route;
        if (host.endsWith(dotApps)) {
            String slug = host.substring(0, host.length() - dotApps.length());
            route = slug.contains(".") ? null : routes.bySlug().get(slug);
        } else {
            route = routes.byDomain().get(host);
        }
        if (route == null) {
            return null;
        }
        int query = target.indexOf('?');
        route = byPath(route, query < 0 ? target : target.substring(0, query));
        boolean canary =
                route.canaryRuntimeId() != null && Canary.pick(route.canaryPercent(), ThreadLocalRandom.current());
        String runtimeId = canary ? route.canaryRuntimeId() : route.runtimeId();
        String providerName = canary ? route.canaryProvider() : route.provider();
        Optional<DeploymentProvider> provider = services.provider(providerName);
        if (provider.isEmpty()) {
            return null;
        }
        Optional<URI> endpoint = provider.get().endpoint(runtimeId);
        if (endpoint.isEmpty()) {
            return null;
        }
        Target t = target(endpoint.get());
        if (t.address().isUnresolved()) {
            return null;
        }
        return new Relay(
                t.address(),
                t.prefix(),
                RELAY_DROPPED,
                status -> count(providerName, runtimeId, status == 0 || status >= 500));
    }

    /** The path services.domains answers ACME http-01 challenges on, an edge handler the relay is asked before. */
    private static final String ACME_CHALLENGES = "/.well-known/acme-challenge/";

    private static final Set<String> RELAY_DROPPED =
            Set.of(ServiceRoutes.SECRET_HEADER.toLowerCase(java.util.Locale.ROOT));

    /** The route of the service a path route of the host's service sends {@code request} to, else {@code route}. */
    private Route byPath(Route route, HttpServletRequest request) {
        return byPath(route, request.getRequestURI());
    }

    private Route byPath(Route route, String path) {
        java.util.List<ServiceRoutes.PathRoute> paths = services.pathRoutes().get(route.serviceId());
        if (paths == null) {
            return route;
        }
        for (ServiceRoutes.PathRoute p : paths) {
            if (p.matches(path)) {
                return p.route();
            }
        }
        return route;
    }

    static String host(String header) {
        return Claims.host(header);
    }

    private void proxy(
            Route route,
            HttpServletRequest request,
            HttpServletResponse response,
            ServletRequest rawRequest,
            ServletResponse rawResponse)
            throws IOException {
        boolean canary =
                route.canaryRuntimeId() != null && Canary.pick(route.canaryPercent(), ThreadLocalRandom.current());
        String runtimeId = canary ? route.canaryRuntimeId() : route.runtimeId();
        String providerName = canary ? route.canaryProvider() : route.provider();
        Optional<URI> endpoint = endpoint(providerName, runtimeId);
        if (endpoint.isEmpty()) {
            count(providerName, runtimeId, true);
            error(
                    response,
                    503,
                    "SERVICE_UNAVAILABLE",
                    services.provider(providerName).isEmpty()
                            ? "the deployment provider '" + providerName + "' of this service is not running; try again"
                            : "the service's deployment is not running now; try again");
            return;
        }
        Target t = target(endpoint.get());
        String query = request.getQueryString();
        String uri = request.getRequestURI();
        String path = t.prefix().isEmpty()
                ? (query == null ? uri : uri + "?" + query)
                : t.prefix() + uri + (query == null ? "" : "?" + query);
        String forwarded = request.getHeader("X-Forwarded-For");
        String remote = request.getRemoteAddr();
        Upstream.Forwarded fwd = new Upstream.Forwarded(
                forwarded == null ? remote : forwarded + ", " + remote,
                request.isSecure() ? "https" : "http",
                request.getHeader("Host"),
                ServiceRoutes.SECRET_HEADER);
        if (WorkerWebSockets.isUpgrade(request)) {
            webSocket(endpoint.get(), path, request, response, rawRequest, rawResponse, fwd);
            return;
        }
        try {
            upstream.exchange(t.address(), path, request, response, fwd);
            count(providerName, runtimeId, response.getStatus() >= 500);
        } catch (Upstream.NoAnswer failure) {
            count(providerName, runtimeId, true);
            LOG.debug("services: proxying to {} of {} failed: {}", runtimeId, route.serviceId(), failure.toString());
            if (!response.isCommitted()) {
                response.reset();
                error(response, 502, "BAD_GATEWAY", "the service's deployment did not answer");
            }
        } catch (IOException failure) {
            // the client went away, or the deployment broke off mid-answer: nothing more can be said on this response
            LOG.debug("services: a proxied exchange of {} ended early: {}", route.serviceId(), failure.toString());
        }
    }

    private void count(String provider, String runtimeId, boolean serverError) {
        traffic.count(runtimeId, serverError);
        metering.count(provider, runtimeId);
        if (counted.incrementAndGet() % 4096 == 0) {
            traffic.retain(services.routes().byRuntimeId().keySet());
        }
    }

    @Override
    public Counts counts(String runtimeId) {
        return traffic.counts(runtimeId);
    }

    /** How long a request waits for a deployment provider that is being updated: the kernel's update gate bound. */
    private static final long PROVIDER_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(15);

    /**
     * The deployment's endpoint. A request whose provider is away waits for it (at most the gate's bound) while the
     * provider's bundle restarts (an update or refresh: it hands its running workers to its next revision) or the
     * kernel holds requests for a change, rather than fail; a provider stopped for good is not waited for.
     */
    private Optional<URI> endpoint(String providerName, String runtimeId) {
        long deadline = System.nanoTime() + PROVIDER_WAIT_NANOS;
        while (true) {
            Optional<DeploymentProvider> provider = services.provider(providerName);
            if (provider.isPresent()) {
                return provider.get().endpoint(runtimeId);
            }
            if ((!readiness.holdsRequests() && !services.providerComingBack(providerName))
                    || System.nanoTime() > deadline) {
                return Optional.empty();
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
    }

    /** An upgrade to a WebSocket: relayed to the worker's WebSocket at the same path ({@link WorkerWebSockets}). */
    private void webSocket(
            URI endpoint,
            String path,
            HttpServletRequest request,
            HttpServletResponse response,
            ServletRequest rawRequest,
            ServletResponse rawResponse,
            Upstream.Forwarded fwd)
            throws IOException {
        if (webSockets == null) {
            error(response, 501, "NOT_IMPLEMENTED", "WebSockets are not available on this server");
            return;
        }
        URI target;
        try {
            target = URI.create("ws://" + endpoint.getRawAuthority() + path);
        } catch (IllegalArgumentException e) {
            error(response, 400, "BAD_REQUEST", "the request's path is not a valid URI");
            return;
        }
        try {
            webSockets.relay(target, request, response, rawRequest, rawResponse, fwd);
        } catch (IOException | RuntimeException failure) {
            LOG.debug("services: a WebSocket upgrade to {} failed: {}", target, failure.toString());
            if (!response.isCommitted()) {
                response.reset();
                error(response, 502, "BAD_GATEWAY", "the service's deployment did not take the WebSocket");
            }
        }
    }

    /** An endpoint's address and path prefix, worked out once per endpoint rather than per request (no regex, no parse). */
    record Target(InetSocketAddress address, String prefix) {}

    private Target target(URI e) {
        Target t = targets.get(e);
        if (t == null) {
            String prefix = e.getRawPath() == null ? "" : e.getRawPath().replaceAll("/+$", "");
            t = new Target(new InetSocketAddress(e.getHost(), e.getPort()), prefix);
            String host = e.getHost();
            boolean literal =
                    host != null && !host.isEmpty() && (Character.isDigit(host.charAt(0)) || host.charAt(0) == '[');
            if (!literal) {
                return t; // a name is looked up again each time, as its address may change
            }
            if (targets.size() > 4096) {
                targets.clear(); // endpoints of deployments long gone
            }
            targets.put(e, t);
        }
        return t;
    }

    static void error(HttpServletResponse response, int status, String code, String message) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        String body = "{\"error\":{\"code\":\"" + code + "\",\"message\":" + JSON.writeValueAsString(message) + "}}";
        response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    }
}
