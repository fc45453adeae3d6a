package dev.atrium.services.api;

import dev.atrium.deploy.api.DeploymentProvider;
import java.io.InterruptedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Where the requests for services go, published by the services capability after every change it applied: the bundle
 * that routes requests by Host and the one that answers deployed code's binding calls read it on every request.
 */
@ProviderType
public interface ServiceRoutes {

    /** The header a deployment's runtime sends (never visible to its code) to the binding endpoint; a client's copy is dropped. */
    String SECRET_HEADER = "X-Atrium-Binding-Secret";

    /** The path deployed code reaches its bindings under: {@code <prefix><runtime id>/<binding name>[/…]}. */
    String BINDINGS_PATH = "/internal/bindings/";

    /** The request attribute naming the TLS server name of a request that came through the services' HTTPS listener ("" when none). */
    String SNI_ATTRIBUTE = "dev.atrium.services.sni";

    /**
     * The service property of the {@code HostRouter} that routes services' hosts, for a bundle that must not serve
     * without it (the HTTPS listener of custom domains): {@code @Reference(target = "(" + HOST_ROUTER_PROPERTY + "=true)")}.
     */
    String HOST_ROUTER_PROPERTY = "atrium.services.router";

    /** The current routing table; replaced as a whole, so a reader may keep what it derived from one instance. */
    Routes routes();

    /** Whether a routing table was published since the services capability started. */
    boolean hasRoutes();

    /** Waits at most {@code millis} for the first routing table; whether there is one. */
    boolean awaitRoutes(long millis) throws InterruptedIOException;

    /** The verified custom domains as stored, for a router that starts before the first table. */
    Set<String> verifiedDomainNames();

    /** Services answer at {@code <slug>.<appsDomain>}: lower case, without a port. */
    String appsDomain();

    /** The registered deployment provider named {@code name}. */
    Optional<DeploymentProvider> provider(String name);

    /** Whether the provider named {@code name} left while its bundle restarts (an update), so it is worth waiting for. */
    boolean providerComingBack(String name);

    /** The secret the deployment {@code runtimeId} proves itself with at the binding endpoint ({@link #SECRET_HEADER}). */
    String bindingSecret(String runtimeId);

    /** Where a request for a service goes: its current deployment, and its canary with the share of requests it gets. */
    record Route(
            String serviceId,
            String slug,
            String provider,
            String runtimeId,
            String canaryProvider,
            String canaryRuntimeId,
            int canaryPercent) {}

    /**
     * The path routes of services' hostnames, by the id of the service whose hostname it is: each list longest prefix
     * first, each entry the route of the service its prefix sends to (see {@link ServiceControl#setPathRoutes}).
     * Published with each routing table, just before it; a service without path routes is not a key.
     *
     * @since 1.4
     */
    Map<String, java.util.List<PathRoute>> pathRoutes();

    /** Requests to a hostname whose path starts with {@code prefix} (whole segments) go to {@code route}. */
    record PathRoute(String prefix, Route route) {

        /** Whether {@code path} is {@code prefix} or lies under it. */
        public boolean matches(String path) {
            if ("/".equals(prefix)) {
                return true;
            }
            return path.startsWith(prefix) && (path.length() == prefix.length() || path.charAt(prefix.length()) == '/');
        }
    }

    /** A running deployment, as the binding endpoint knows its caller. */
    record Target(String serviceId, String spaceId, String runtimeId) {}

    /** The routing table: routes by slug and by verified custom domain, running deployments by runtime id. */
    record Routes(Map<String, Route> bySlug, Map<String, Route> byDomain, Map<String, Target> byRuntimeId) {

        public static final Routes EMPTY = new Routes(Map.of(), Map.of(), Map.of());
    }
}
