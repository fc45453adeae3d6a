package dev.atrium.kernel.internal.http;

import dev.atrium.kernel.api.HostRouter;
import dev.atrium.kernel.api.HostRouter.Claims;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands requests to the {@link HostRouter}s before anything else sees them, and holds those of a router that is away.
 * A router that leaves keeps the requests it is answering (they may need others it claims: a worker's call to its
 * bindings, so the kernel does not wait for them); its last claims are kept, and a request they cover waits while its bundle is coming back (being updated, refreshed or restarted: it stays persistently started),
 * at most the update gate's bound, then goes to the router again, or is answered 503; at once when an operator
 * stopped the bundle. So traffic for a deployed service's hostname never
 * falls through to the API while the bundle that routes it is updated.
 */
@Component(
        service = HostRouting.class,
        configurationPid = "dev.atrium.kernel.gate",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
public class HostRouting {

    private static final Logger LOG = LoggerFactory.getLogger(HostRouting.class);

    enum Outcome {
        /** No router claims the request: the API's. */
        NOT_ROUTED,
        ROUTED,
        /** Its router is away and did not come back within the bound, or its bundle is not running. */
        UNAVAILABLE
    }

    private record Present(HostRouter router, Bundle bundle) {}

    private record Away(Bundle bundle, Claims claims) {}

    private final long maxHoldNanos;
    private final Object lock = new Object();
    private final List<Present> present = new CopyOnWriteArrayList<>();
    private final Map<Long, Away> away = new ConcurrentHashMap<>();

    private final Bundle framework;

    @Activate
    public HostRouting(UpdateGate.Config config, BundleContext context) {
        this.maxHoldNanos = TimeUnit.MILLISECONDS.toNanos(config.maxHoldMillis());
        this.framework = context.getBundle(0);
    }

    @Reference(
            service = HostRouter.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addRouter(HostRouter router, ServiceReference<HostRouter> reference) {
        Bundle bundle = reference.getBundle();
        synchronized (lock) {
            present.add(new Present(router, bundle));
            if (bundle != null) {
                away.remove(bundle.getBundleId());
            }
            lock.notifyAll();
        }
    }

    void removeRouter(HostRouter router, ServiceReference<HostRouter> reference) {
        Present leaving =
                present.stream().filter(p -> p.router() == router).findFirst().orElse(null);
        if (leaving == null) {
            return;
        }
        Claims last;
        try {
            last = router.claims(); // its service is unregistering: the component has not been deactivated yet
        } catch (RuntimeException e) {
            LOG.warn(
                    "a host router's claims could not be read as it left; its requests go to the API while it is away",
                    e);
            last = Claims.NONE;
        }
        synchronized (lock) {
            // kept before it is removed: a request that looks (without the lock) finds it in one or the other
            if (leaving.bundle() != null) {
                away.put(leaving.bundle().getBundleId(), new Away(leaving.bundle(), last));
            }
            present.remove(leaving);
        }
    }

    /** Routes the request when a router claims it, holding it while its router is away; answers nothing otherwise. */
    @SuppressWarnings("ReferenceEquality") // the same registration, not an equal one
    Outcome route(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
        if (present.isEmpty() && away.isEmpty()) {
            return Outcome.NOT_ROUTED;
        }
        String host = Claims.host(request.getHeader("Host"));
        String path = request.getRequestURI();
        long deadline = System.nanoTime() + maxHoldNanos;
        while (true) {
            // a claim by name (host, host suffix, attribute) wins over one by path, a router that is away included:
            // every path of a deployed service's host is the service's, whatever another router's path prefix
            Present p = claimant(request, host, path, true);
            Away a = p == null ? awayClaimant(request, host, path, true) : null;
            if (p == null && a == null) {
                p = claimant(request, host, path, false);
                a = p == null ? awayClaimant(request, host, path, false) : null;
            }
            if (p != null) {
                if (p.router().route(request, response)) {
                    return Outcome.ROUTED;
                }
                if (present.contains(p)) {
                    return Outcome.NOT_ROUTED; // it declines while registered: not its request after all
                }
                continue; // it is leaving: its claims are kept now
            }
            if (a == null) {
                return Outcome.NOT_ROUTED;
            }
            if (!comingBack(a) || System.nanoTime() >= deadline) {
                request.setAttribute(
                        UNAVAILABLE_BECAUSE,
                        comingBack(a)
                                ? name(a.bundle()) + " did not come back within "
                                        + TimeUnit.NANOSECONDS.toMillis(maxHoldNanos) + " ms"
                                : name(a.bundle()) + " is not running");
                return Outcome.UNAVAILABLE;
            }
            synchronized (lock) {
                if (away.get(a.bundle().getBundleId()) == a) {
                    try {
                        // woken when a router registers; the bound is checked again at least every 250 ms
                        lock.wait(Math.max(
                                1, Math.min(250, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        request.setAttribute(UNAVAILABLE_BECAUSE, "the server is stopping");
                        return Outcome.UNAVAILABLE;
                    }
                }
            }
        }
    }

    /** The request attribute saying why a request was {@link Outcome#UNAVAILABLE}. */
    static final String UNAVAILABLE_BECAUSE = "atrium.hostRouting.unavailable";

    private Present claimant(HttpServletRequest request, String host, String path, boolean byName) {
        for (Present p : present) {
            if (covers(p.router().claims(), request, host, path, byName)) {
                return p;
            }
        }
        return null;
    }

    @SuppressWarnings(
            "ModifyCollectionInEnhancedForLoop") // a ConcurrentHashMap view: removal while iterating is defined
    private Away awayClaimant(HttpServletRequest request, String host, String path, boolean byName) {
        for (Away a : away.values()) {
            if (a.bundle().getState() == Bundle.UNINSTALLED) {
                away.remove(a.bundle().getBundleId(), a);
            } else if (covers(a.claims(), request, host, path, byName)) {
                return a;
            }
        }
        return null;
    }

    /** Whether {@code claims} cover the request by name (host, host suffix, attribute), or else by path prefix. */
    static boolean covers(Claims claims, HttpServletRequest request, String host, String path, boolean byName) {
        // plain loops: this runs up to four times for every request, the API's included
        if (!byName) {
            for (String prefix : claims.pathPrefixes()) {
                if (path.startsWith(prefix)) {
                    return true;
                }
            }
            return false;
        }
        if (host != null) {
            if (claims.hosts().contains(host)) {
                return true;
            }
            for (String suffix : claims.hostSuffixes()) {
                if (host.endsWith(suffix)) {
                    return true;
                }
            }
        }
        for (String attribute : claims.attributes()) {
            if (request.getAttribute(attribute) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * A bundle being updated or refreshed passes through RESOLVED and INSTALLED but stays persistently started; one an
     * operator stopped (a feature disabled) is not, and its hosts are answered 503 at once.
     */
    private boolean comingBack(Away a) {
        if (framework.getState() == Bundle.STOPPING) {
            return false; // the server stops: nothing comes back
        }
        int state = a.bundle().getState();
        if (state == Bundle.STARTING || state == Bundle.ACTIVE || state == Bundle.STOPPING) {
            return true;
        }
        try {
            BundleStartLevel level = a.bundle().adapt(BundleStartLevel.class);
            return level != null && level.isPersistentlyStarted();
        } catch (IllegalStateException uninstalled) {
            return false;
        }
    }

    private static String name(Bundle b) {
        return b == null ? "a bundle" : b.getSymbolicName();
    }
}
