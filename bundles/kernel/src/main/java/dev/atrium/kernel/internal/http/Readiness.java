package dev.atrium.kernel.internal.http;

import dev.atrium.kernel.api.ServerReadiness;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.framework.startlevel.FrameworkStartLevel;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.service.jaxrs.runtime.JaxrsServiceRuntime;
import org.osgi.service.jaxrs.runtime.dto.ResourceDTO;
import org.osgi.service.jaxrs.runtime.dto.RuntimeDTO;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the server is ready: every Atrium bundle is active, every enabled component of it is satisfied or
 * active, and every JAX-RS resource it registers is served by the whiteboard. A first 200 from some route
 * proves none of that.
 * <p>
 * Working that out walks every bundle, component and the whiteboard's runtime DTO, so it is done when something
 * changes, not per probe: every bundle and service event (the whiteboard's change count is a service property, so its
 * changes are service events too) marks a ready answer stale, and a probe in between answers from it. A not-ready
 * answer is worked out again after a short while, events or not (some of what it waits for, like the whiteboard
 * settling, changes by time alone), and a ready one after a longer while as a backstop. Until the framework has
 * reached its beginning start level nothing is walked at all.
 */
@Component(service = {Readiness.class, ServerReadiness.class})
public class Readiness implements ServerReadiness {

    private static final Logger LOG = LoggerFactory.getLogger(Readiness.class);
    private static final String ATRIUM = "dev.atrium.";
    /** How long a resource may stay unlisted by a quiet whiteboard before it is registered again. */
    private static final long UNLISTED_GRACE_NANOS = 3_000_000_000L;
    /** Aries rebuilds the application after its DTO already lists a resource: wait until it has been quiet this long. */
    private static final long SETTLE_NANOS = 300_000_000L;

    private static final String SETTLING = "the JAX-RS whiteboard is still applying changes";

    /** Whether the only thing not ready is the whiteboard's settle time. */
    static boolean onlySettling(List<String> problems) {
        return problems.size() == 1 && SETTLING.equals(problems.get(0));
    }

    /** How long a not-ready answer is reused, events or not. */
    private static final long NOT_READY_REUSE_NANOS = 50_000_000L;
    /** How long a ready answer is reused without an event: a backstop for a change no event announces. */
    private static final long READY_REUSE_NANOS = 5_000_000_000L;

    private final BundleContext context;
    private final ServiceComponentRuntime scr;
    private final AtomicLong changes = new AtomicLong();
    private final Object computing = new Object();
    private final SynchronousBundleListener bundleEvents = (BundleEvent e) -> changes.incrementAndGet();
    private final ServiceListener serviceEvents = this::serviceEvent;
    private volatile Answer last = new Answer(-1, List.of("readiness not yet worked out"), System.nanoTime());

    /**
     * An answer and when it stops being reusable: the change count it was worked out at and a time. A ready answer goes
     * stale with the next event; a not-ready one is kept for its short while whatever happens, since during a start or an
     * update events come by the hundred and a walk per probe (probes every 20 ms) competed with the start for the CPU.
     * That makes "ready" known at most that while late, never early.
     */
    private record Answer(long changes, List<String> problems, long reusableUntil) {
        boolean reusable(long currentChanges, long now) {
            return (changes == currentChanges || !problems.isEmpty()) && now - reusableUntil < 0;
        }
    }

    /** Set once the framework has reached its beginning start level; it never goes back while this runs. */
    private volatile boolean started;

    /**
     * While the framework is still raising its start level to the beginning one ({@code
     * org.osgi.framework.startlevel.beginning}, which the launcher sets), bundles of the levels above have not been
     * started, so the server is not ready and nothing needs walking to say so. Without that property there is nothing
     * to wait for here.
     */
    private List<String> frameworkStarting() {
        if (started) {
            return null;
        }
        try {
            String beginning = context.getProperty(Constants.FRAMEWORK_BEGINNING_STARTLEVEL);
            int target = beginning == null ? 0 : Integer.parseInt(beginning.trim());
            int level = context.getBundle(0).adapt(FrameworkStartLevel.class).getStartLevel();
            if (level < target) {
                return List.of("the framework is starting (start level " + level + " of " + target + ")");
            }
        } catch (NumberFormatException notANumber) {
            // Felix would not have started with it either; nothing to compare with
        } catch (IllegalStateException stopping) {
            return List.of("the framework is stopping");
        }
        started = true;
        return null;
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile JaxrsServiceRuntime jaxrs;

    /** The update gate, which asks this component when to open (so a dynamic reference, not a constructor one). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile UpdateGate gate;

    @Override
    public boolean holdsRequests() {
        UpdateGate g = gate;
        return g != null && g.holding();
    }

    /** Asks the live application whether it answers each resource (Aries lists one before its rebuilt application serves it). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile WhiteboardProbe probe;

    /** Resources the live application was seen answering; only new ones are asked again. */
    private final Set<Long> answering = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final UnlistedResources unlisted = new UnlistedResources(UNLISTED_GRACE_NANOS);
    /** How often each component was registered again: a resource the whiteboard ignores every time is left alone. */
    private final java.util.Map<String, Integer> registeredAgain = new java.util.concurrent.ConcurrentHashMap<>();

    private static final int MAX_REGISTER_AGAIN = 3;

    /** The whiteboard's change count last seen and when it was first seen. */
    private final AtomicReference<long[]> lastChange = new AtomicReference<>(new long[] {-1, 0});

    @Activate
    public Readiness(BundleContext context, @Reference ServiceComponentRuntime scr) {
        this.context = context;
        this.scr = scr;
        // synchronous, so a change is counted in the thread that makes it, before anyone can ask about it
        context.addBundleListener(bundleEvents);
        context.addServiceListener(serviceEvents);
    }

    @Deactivate
    void deactivate() {
        context.removeServiceListener(serviceEvents);
        context.removeBundleListener(bundleEvents);
    }

    private void serviceEvent(ServiceEvent e) {
        changes.incrementAndGet();
        Object classes = e.getServiceReference().getProperty("objectClass");
        if (classes instanceof String[] names && Arrays.asList(names).contains(JaxrsServiceRuntime.class.getName())) {
            Object count = e.getServiceReference().getProperty("service.changecount");
            if (count instanceof Number n) {
                changed(n.longValue(), System.nanoTime());
            }
        }
    }

    /** Notes a change count and when it was first seen; the same count seen again keeps its time. */
    private long[] changed(long count, long now) {
        return lastChange.updateAndGet(prev -> prev[0] == count ? prev : new long[] {count, now});
    }

    @Override
    public List<String> notReady() {
        List<String> starting = frameworkStarting();
        if (starting != null) {
            return starting;
        }
        Answer answer = last;
        if (answer.reusable(changes.get(), System.nanoTime())) {
            return answer.problems();
        }
        synchronized (computing) {
            answer = last;
            long seen = changes.get();
            if (answer.reusable(seen, System.nanoTime())) {
                return answer.problems();
            }
            // the count is read before the state: an event during the walk makes the next probe walk again
            List<String> problems = List.copyOf(workOut());
            long now = System.nanoTime();
            last = new Answer(seen, problems, now + (problems.isEmpty() ? READY_REUSE_NANOS : NOT_READY_REUSE_NANOS));
            return problems;
        }
    }

    private List<String> workOut() {
        // read first, whatever else is not ready, so that a change of the whiteboard is seen as early as it can be
        boolean settled = settled();
        List<String> problems = ComponentStates.problems(context, scr);
        if (!problems.isEmpty()) {
            return problems;
        }
        problems.addAll(unservedResources());
        if (!problems.isEmpty()) {
            return problems;
        }
        // Listed is not served: Aries lists a resource before its rebuilt application serves it, so the live
        // application is asked about every resource not yet seen answering. The whiteboard must also have been quiet
        // for the settle time, at start-up too: a capability whose component Aries activates late (its resource
        // registered, activated when Aries takes it) is added by one more rebuild after every listed resource
        // answered, and a request then met an application without the rest ("no route for POST /admin/users" right
        // after /healthz said 200, in a suite at load). A change that only removes resources leaves nothing to ask.
        if (!settled) {
            problems.add(SETTLING);
            return problems;
        }
        WhiteboardProbe p = probe;
        List<String> unanswered = p == null ? null : p.unanswered(answering);
        if (unanswered != null) {
            for (String name : unanswered) {
                problems.add(name + " is listed but the JAX-RS application does not answer it yet");
            }
        }
        return problems;
    }

    /**
     * True once the whiteboard's change count has stayed the same for the settle time, counted from the service event
     * that announced it (the runtime's properties changed). Counted before from when a probe first saw a count, a
     * change long past made the next /healthz 503 for the settle time (a verified custom domain's /healthz over HTTP
     * right after a quiet spell). Aries bumps the count before it has rebuilt the application, so under load the
     * rebuild can outlast the settle time: a new resource is also asked whether it answers ({@link WhiteboardProbe}).
     */
    private boolean settled() {
        long now = System.nanoTime();
        long[] seen = changed(changeCount(), now);
        return now - seen[1] >= SETTLE_NANOS;
    }

    private long changeCount() {
        ServiceReference<JaxrsServiceRuntime> ref = context.getServiceReference(JaxrsServiceRuntime.class);
        Object count = ref == null ? null : ref.getProperty("service.changecount");
        return count instanceof Number n ? n.longValue() : -1;
    }

    private List<String> unservedResources() {
        JaxrsServiceRuntime runtime = jaxrs;
        if (runtime == null) {
            return List.of("the JAX-RS whiteboard is not running");
        }
        ServiceReference<?>[] resources;
        try {
            resources = context.getAllServiceReferences(null, "(osgi.jaxrs.resource=true)");
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        if (resources == null) {
            return List.of();
        }
        RuntimeDTO dto;
        try {
            dto = runtime.getRuntimeDTO();
        } catch (RuntimeException changing) {
            // Aries builds the DTO from state it is still changing (an NPE seen under load at start-up): not ready yet,
            // and the next probe asks again
            return List.of("the JAX-RS whiteboard is still applying changes ("
                    + changing.getClass().getSimpleName() + ")");
        }
        Set<Long> served = new HashSet<>();
        if (dto.defaultApplication != null) {
            for (ResourceDTO r : dto.defaultApplication.resourceDTOs) {
                served.add(r.serviceId);
            }
        }
        for (var app : dto.applicationDTOs) {
            for (ResourceDTO r : app.resourceDTOs) {
                served.add(r.serviceId);
            }
        }
        java.util.Map<Long, Integer> failed = new java.util.HashMap<>();
        for (var f : dto.failedResourceDTOs) {
            failed.put(f.serviceId, f.failureReason);
        }
        List<String> problems = new ArrayList<>();
        java.util.Map<Long, ServiceReference<?>> neitherServedNorFailed = new java.util.HashMap<>();
        for (ServiceReference<?> ref : resources) {
            String bsn = ref.getBundle() == null ? null : ref.getBundle().getSymbolicName();
            long id = (Long) ref.getProperty("service.id");
            if (bsn != null && bsn.startsWith(ATRIUM) && !served.contains(id)) {
                Object name = ref.getProperty("component.name");
                Integer reason = failed.get(id);
                problems.add((name == null ? "service " + id : name) + " is not served by the JAX-RS whiteboard"
                        + (reason == null ? "" : " (" + reason(reason) + ")"));
                if (reason == null) {
                    neitherServedNorFailed.put(id, ref);
                }
            }
        }
        for (Long id : unlisted.observe(
                neitherServedNorFailed.keySet(), System.nanoTime(), lastChange.get()[1])) {
            registerAgain(neitherServedNorFailed.get(id));
        }
        for (var f : dto.failedExtensionDTOs) {
            problems.add(
                    "JAX-RS extension " + f.name + " (service " + f.serviceId + ") failed: " + reason(f.failureReason));
        }
        return problems;
    }

    /**
     * Has DS register a resource's component again, so that the whiteboard sees a new registration of it. Done on a
     * thread of its own: disabling a component sends service events the whiteboard handles in the disabling thread.
     */
    private void registerAgain(ServiceReference<?> ref) {
        Bundle bundle = ref.getBundle();
        Object name = ref.getProperty("component.name");
        ComponentDescriptionDTO component =
                bundle == null || name == null ? null : scr.getComponentDescriptionDTO(bundle, name.toString());
        if (component == null) {
            LOG.warn(
                    "JAX-RS resource service {} of {} is neither served nor listed as failed by the whiteboard, and is not"
                            + " a DS component that could be registered again",
                    ref.getProperty("service.id"),
                    bundle);
            return;
        }
        if (registeredAgain.merge(component.name, 1, Integer::sum) > MAX_REGISTER_AGAIN) {
            return;
        }
        LOG.warn(
                "JAX-RS resource {} (service {}) is neither served nor listed as failed by the quiet whiteboard after {} ms;"
                        + " registering it again",
                name,
                ref.getProperty("service.id"),
                UNLISTED_GRACE_NANOS / 1_000_000);
        Thread kick = new Thread(
                () -> {
                    try {
                        scr.disableComponent(component).getValue();
                        scr.enableComponent(component).getValue();
                    } catch (Exception e) {
                        if (e instanceof InterruptedException) {
                            Thread.currentThread().interrupt();
                        }
                        LOG.warn("registering {} again failed", name, e);
                    }
                },
                "atrium-readiness-register-again");
        kick.setDaemon(true);
        kick.start();
    }

    private static String reason(int code) {
        return switch (code) {
            case 2 -> "shadowed by another service";
            case 3 -> "its application is not selected";
            case 4 -> "invalid whiteboard property";
            case 5 -> "a required extension is unavailable";
            case 6 -> "the required application is unavailable";
            case 7 -> "the service could not be obtained";
            case 8 -> "validation failed";
            case 9 -> "duplicate name";
            default -> "failure reason " + code;
        };
    }

    /** Capability bundles (those providing an {@code atrium.capability} capability) that are active. */
    public List<Bundle> activeCapabilities() {
        List<Bundle> out = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            if (b.getState() == Bundle.ACTIVE && CapabilityDeclaration.of(b).isPresent()) {
                out.add(b);
            }
        }
        return out;
    }
}
