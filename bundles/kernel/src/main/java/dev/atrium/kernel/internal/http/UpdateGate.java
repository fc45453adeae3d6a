package dev.atrium.kernel.internal.http;

import dev.atrium.kernel.api.NamedThreads;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.FrameworkListener;
import org.osgi.framework.hooks.bundle.EventHook;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds API requests while a capability bundle is stopped, updated or started, so none of them meets the
 * JAX-RS application half rebuilt (Aries rebuilds the whole application when any resource changes).
 * A bundle event hook sees STOPPING (and STARTING) before SCR removes or adds a single service: the gate closes there and waits
 * (bounded) for in-flight API requests to finish. It opens again once readiness reports every resource
 * served and the whiteboard settled, or when the hold bound is reached. Updates that do not come through
 * the admin API (FileInstall) are covered the same way.
 */
@Component(
        service = {EventHook.class, UpdateGate.class},
        configurationPid = "dev.atrium.kernel.gate",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = UpdateGate.Config.class)
public class UpdateGate implements EventHook {

    @ObjectClassDefinition(name = "Atrium update gate")
    public @interface Config {
        @AttributeDefinition(description = "Longest time in milliseconds a request is held while a capability changes")
        long maxHoldMillis() default 15000;
    }

    private static final Logger LOG = LoggerFactory.getLogger(UpdateGate.class);

    /** How often the opener asks readiness; each answer builds the whiteboard's runtime DTO, so not too often. */
    private static final long POLL_MILLIS = 25;

    private final long maxHoldNanos;
    private final Readiness readiness;
    private final WhiteboardProbe probe;
    /** The JAX-RS resources registered when the gate closed: those registered after are probed before it opens. */
    private volatile Set<Long> resourcesAtClose = Set.of();

    private final Bundle framework;
    private final ExecutorService opener =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-update-gate"));
    private final Object lock = new Object();
    /** API requests in flight; counted without the lock, so an open gate costs a request two atomic updates. */
    private final AtomicInteger inFlight = new AtomicInteger();

    private final java.util.concurrent.atomic.LongAdder holds = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder heldRequests = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder heldNanos = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder refusedRequests = new java.util.concurrent.atomic.LongAdder();

    private volatile boolean closed;
    /** Whether the framework's own start is over; until then starting bundles do not close the gate. */
    private volatile boolean frameworkStarted;

    private final BundleContext context;
    private final FrameworkListener frameworkListener = this::frameworkEvent;
    private long closedAt;
    /** When the gate last went from open to closed (closedAt moves with every change while it stays closed). */
    private long heldSince;

    private long generation;

    @Activate
    public UpdateGate(
            Config config, @Reference Readiness readiness, @Reference WhiteboardProbe probe, BundleContext context) {
        this.probe = probe;
        this.maxHoldNanos = TimeUnit.MILLISECONDS.toNanos(config.maxHoldMillis());
        this.readiness = readiness;
        this.framework = context.getBundle(0);
        // activated during the framework's start, bundles still wait above the active level; activated later (the
        // kernel updated), none does
        this.frameworkStarted = !bundlesAboveActiveLevel();
        this.context = context;
        context.addFrameworkListener(frameworkListener);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        context.removeFrameworkListener(frameworkListener);
        opener.shutdownNow();
        opener.awaitTermination(5, TimeUnit.SECONDS);
        open(generation);
    }

    @Override
    public void event(BundleEvent event, Collection<BundleContext> contexts) {
        Bundle b = event.getBundle();
        // while the server stops, the first bundle to go is Aries' whiteboard (the last level to start): a request
        // still running then would lose the application that writes its answer (an upload finished with 200 and no
        // body), so any bundle's stop closes the gate and waits for what is in flight
        // (the system bundle's own STOPPING comes first: ServerStop answers new requests 503 and closes the listeners
        // then, so nothing waits here for it)
        boolean serverStopping = event.getType() == BundleEvent.STOPPING
                && framework.getState() == Bundle.STOPPING
                && b.getBundleId() != 0;
        if (!serverStopping && !changesTheApi(b)) {
            return;
        }
        // starting a bundle rebuilds the whole JAX-RS application too, so it closes the gate like a stop; not
        // while the framework itself starts, when nothing is served yet and /healthz says so
        if (event.getType() == BundleEvent.STOPPING || (event.getType() == BundleEvent.STARTING && frameworkStarted)) {
            close(b);
        } else if (event.getType() == BundleEvent.STOPPED || event.getType() == BundleEvent.STARTED) {
            scheduleOpen();
        }
    }

    /**
     * Whether a bundle's start or stop rebuilds the JAX-RS application: Atrium's own, and a plugin with resources of
     * its own (kernel.api's {@code @KernelResource} makes it require the JAX-RS whiteboard).
     */
    static boolean changesTheApi(Bundle b) {
        if (b.getSymbolicName() != null && b.getSymbolicName().startsWith("dev.atrium.")) {
            return true;
        }
        BundleRevision revision = b.adapt(BundleRevision.class);
        return revision != null
                && revision.getDeclaredRequirements("osgi.implementation").stream()
                        .anyMatch(r -> String.valueOf(r.getDirectives().get("filter"))
                                .contains("osgi.implementation=osgi.jaxrs"));
    }

    /** Whether a persistently started bundle waits for a start level above the framework's active one. */
    private boolean bundlesAboveActiveLevel() {
        int active = framework.adapt(FrameworkStartLevel.class).getStartLevel();
        for (Bundle b : framework.getBundleContext().getBundles()) {
            BundleStartLevel level = b.adapt(BundleStartLevel.class);
            if (level != null && level.getStartLevel() > active && level.isPersistentlyStarted()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The framework has started once it reports reaching its start level with no bundle waiting above it. Felix
     * reports itself ACTIVE from the first level on, and raises the active level before it starts that level's
     * bundles, so neither says the start is over.
     */
    private void frameworkEvent(FrameworkEvent e) {
        if ((e.getType() == FrameworkEvent.STARTED || e.getType() == FrameworkEvent.STARTLEVEL_CHANGED)
                && !bundlesAboveActiveLevel()) {
            frameworkStarted = true;
        }
    }

    private void close(Bundle b) {
        long deadline = System.nanoTime() + maxHoldNanos;
        synchronized (lock) {
            if (!closed) {
                resourcesAtClose = probe.resources();
                holds.increment();
                closed = true;
                heldSince = System.nanoTime();
                LOG.info("holding API requests while {} changes", b.getSymbolicName());
            }
            // the hold bound counts from the latest change: a refresh stops and starts several bundles, and an
            // update right after another must not inherit the earlier one's deadline (each request still waits
            // at most the bound); the openers scheduled before are superseded by those its events schedule
            closedAt = System.nanoTime();
            generation++;
            // a request counts itself before it reads the flag and the flag is set before this reads the count
            // (both volatile), so every request either sees the gate closed or is counted here
            while (inFlight.get() > 0 && System.nanoTime() < deadline) {
                waitUntil(deadline);
            }
        }
    }

    private void scheduleOpen() {
        long gen;
        synchronized (lock) {
            if (!closed) {
                return;
            }
            gen = generation;
        }
        opener.execute(() -> {
            long deadline;
            synchronized (lock) {
                deadline = closedAt + maxHoldNanos;
            }
            try {
                while (System.nanoTime() < deadline) {
                    List<String> problems = readiness.notReady();
                    // everything registered and listed, and the application answering the new resources: Aries lists
                    // a resource before its rebuilt application serves it, so a settled whiteboard alone is not
                    // enough while there is a new resource to ask about; the settle time is what the gate waits
                    // only when it cannot ask
                    if (problems.isEmpty() || Readiness.onlySettling(problems)) {
                        Boolean served = probe.newResourcesServed(resourcesAtClose);
                        if (served == null ? problems.isEmpty() : served) {
                            break;
                        }
                    }
                    Thread.sleep(POLL_MILLIS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            open(gen);
        });
    }

    private void open(long gen) {
        synchronized (lock) {
            if (closed && gen == generation) {
                closed = false;
                LOG.info("API requests flow again after {} ms", (System.nanoTime() - heldSince) / 1_000_000);
                lock.notifyAll();
            }
        }
    }

    /** Whether a request carries the gate's probe secret (and so passes the gate). */
    boolean isProbe(String headerValue) {
        return headerValue != null && probe.isProbe(headerValue);
    }

    /** What {@link #enter} answers when the gate stayed closed for the whole hold: the request is not let in. */
    static final long STILL_CLOSED = -1;

    /**
     * Called by the envelope before an API request; waits (bounded) while the gate is closed. Returns the hold in ms,
     * or {@link #STILL_CLOSED} when the gate is still closed at the bound (the request is then not counted, and must be
     * answered 503: the application it would meet may be half rebuilt).
     */
    long enter() throws InterruptedException {
        inFlight.incrementAndGet();
        if (!closed) {
            return 0;
        }
        exit();
        long started = System.nanoTime();
        synchronized (lock) {
            long deadline = started + maxHoldNanos;
            while (closed && System.nanoTime() < deadline) {
                lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            }
            if (closed) {
                refusedRequests.increment();
                return STILL_CLOSED;
            }
            inFlight.incrementAndGet();
        }
        heldRequests.increment();
        long held = System.nanoTime() - started;
        heldNanos.add(held);
        return held / 1_000_000;
    }

    /** Times the gate closed for a bundle change since the start. */
    long holds() {
        return holds.sum();
    }

    /** API requests that waited at the closed gate and were let in, and the seconds they waited in all. */
    long heldRequests() {
        return heldRequests.sum();
    }

    double heldSeconds() {
        return heldNanos.sum() / 1e9;
    }

    /** API requests still at the closed gate when its bound ran out (answered 503). */
    long refusedRequests() {
        return refusedRequests.sum();
    }

    /** Whether API requests are being held now. */
    boolean holding() {
        return closed;
    }

    void exit() {
        if (inFlight.decrementAndGet() == 0 && closed) {
            synchronized (lock) {
                lock.notifyAll();
            }
        }
    }

    @SuppressWarnings("WaitNotInLoop") // every caller loops until its condition or deadline
    private void waitUntil(long deadline) {
        try {
            lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
