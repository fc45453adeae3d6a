package dev.atrium.runs.internal;

import dev.atrium.runs.api.RunEvents;
import dev.atrium.runs.internal.RunStore.Event;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.EventAdmin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts {@link RunEvents#FINISHED} on EventAdmin when a run's terminal event commits on this instance (exactly one
 * instance commits it), so another capability can follow a run it started. Asynchronous ({@code postEvent}): a slow
 * listener never holds up the worker that recorded the end. Without EventAdmin nothing is posted; listeners reconcile
 * through {@link dev.atrium.runs.api.RunStarter#status}.
 */
@Component(
        service = {},
        immediate = true)
public class RunFinishedEvents {

    private static final Logger LOG = LoggerFactory.getLogger(RunFinishedEvents.class);

    private final RunStore store;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile EventAdmin events;

    private final Consumer<Event> committed = this::committed;

    @Activate
    public RunFinishedEvents(@Reference RunStore store) {
        this.store = store;
        store.onCommitted(committed);
    }

    @Deactivate
    void deactivate() {
        store.removeCommitted(committed);
    }

    private void committed(Event event) {
        EventAdmin admin = events;
        if (admin == null || !RunStore.TERMINAL_EVENTS.contains(event.type())) {
            return;
        }
        try {
            store.get(event.runId()).ifPresent(run -> {
                Map<String, Object> props = new HashMap<>();
                props.put(RunEvents.RUN_ID, run.id());
                props.put(RunEvents.SPACE_ID, run.spaceId());
                props.put(RunEvents.THREAD_ID, run.threadId());
                props.put(RunEvents.STATUS, event.type().substring("run.".length()));
                admin.postEvent(new org.osgi.service.event.Event(RunEvents.FINISHED, props));
            });
        } catch (RuntimeException e) {
            // the run has ended whatever happens here; a listener that misses it reconciles from the run's status
            LOG.warn("posting the end of run {} failed", event.runId(), e);
        }
    }
}
