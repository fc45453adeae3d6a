package dev.atrium.services.bindings.internal;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.osgi.service.component.annotations.Component;

/**
 * How often {@link WorkflowEngine} asks the store for due instances of one workflow binding of one service. A binding
 * whose last claim found work is asked every tick; each claim that finds nothing doubles the wait, up to
 * {@link #MAX_WAIT_MILLIS}, so an idle binding costs a query every 2 s instead of five a second. What makes work on this
 * server (the binding's own calls: create, resume, restart; a run ending, which may leave a sleep or retry due soon)
 * nudges the binding back to every tick. Work made elsewhere (another server, the resources API) is found within the
 * longest wait.
 */
@Component(service = WorkflowPacing.class)
public class WorkflowPacing {

    static final long MAX_WAIT_MILLIS = 2_000;

    private record Pace(long dueAt, long waitNanos) {}

    private final LongSupplier clock;
    private final long firstWaitNanos = TimeUnit.MILLISECONDS.toNanos(WorkflowEngine.TICK_MILLIS);
    private final long maxWaitNanos = TimeUnit.MILLISECONDS.toNanos(MAX_WAIT_MILLIS);
    private final Map<String, Pace> paces = new ConcurrentHashMap<>();

    public WorkflowPacing() {
        this(System::nanoTime);
    }

    WorkflowPacing(LongSupplier clock) {
        this.clock = clock;
    }

    /** Whether the binding is to be asked now: never asked, nudged, or its wait is over. */
    boolean due(String serviceId, String binding) {
        Pace p = paces.get(key(serviceId, binding));
        return p == null || clock.getAsLong() - p.dueAt() >= 0;
    }

    /** Records a claim's outcome: work found keeps the binding at every tick, none doubles its wait. */
    void claimed(String serviceId, String binding, boolean foundWork) {
        paces.compute(key(serviceId, binding), (k, p) -> {
            long wait = foundWork || p == null ? firstWaitNanos : Math.min(p.waitNanos() * 2, maxWaitNanos);
            return new Pace(clock.getAsLong() + wait, wait);
        });
    }

    /** The binding has work, or soon will: asked at the next tick and every tick after until a claim finds none. */
    void nudge(String serviceId, String binding) {
        paces.remove(key(serviceId, binding));
    }

    /** Forgets the bindings of services this server no longer runs. */
    void retain(Set<String> serviceIds) {
        paces.keySet().removeIf(k -> !serviceIds.contains(k.substring(0, k.indexOf('\n'))));
    }

    private static String key(String serviceId, String binding) {
        return serviceId + '\n' + binding;
    }
}
