package dev.atrium.runs.internal;

import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.runs.internal.RunStore.Event;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
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
 * Tells a run's requester that it finished or failed, through the notifications capability. The {@link Notifications}
 * service is tracked as the run's other contributors are, optionally and dynamically (and its package imported
 * optionally): with the notifications capability disabled there is no service and nothing is posted, nothing fails,
 * and this component stays satisfied (so the server stays ready).
 * Each run's terminal event is committed by exactly one instance, which posts the one notification for it.
 */
@Component(
        service = {},
        immediate = true)
public class RunNotices {

    private static final Logger LOG = LoggerFactory.getLogger(RunNotices.class);

    private final RunStore store;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile Notifications notifications;

    private final Consumer<Event> committed = this::committed;

    @Activate
    public RunNotices(@Reference RunStore store) {
        this.store = store;
        store.onCommitted(committed);
    }

    @Deactivate
    void deactivate() {
        store.removeCommitted(committed);
    }

    private void committed(Event event) {
        String type = switch (event.type()) {
            case "run.completed" -> "run.finished";
            case "run.failed" -> "run.failed";
            default -> null; // cancelled: the requester asked for it
        };
        Notifications to = notifications;
        if (type == null || to == null) {
            return;
        }
        try {
            store.get(event.runId()).filter(run -> run.requester() != null).ifPresent(run -> {
                Map<String, Object> data = new LinkedHashMap<>();
                data.put("run_id", run.id());
                data.put("thread_id", run.threadId());
                data.put("status", run.status());
                Notice notice = Notice.toPrincipal(
                                run.requester(), type, "run.finished".equals(type) ? "Run finished" : "Run failed")
                        .inSpace(run.spaceId())
                        .withLink("/api/runs/" + run.id())
                        .withData(data);
                String reason = event.data() == null
                        ? null
                        : event.data().path("reason").asText(null);
                to.post(
                        reason == null
                                ? notice
                                : notice.withBody(reason.length() > 4_000 ? reason.substring(0, 4_000) : reason));
            });
        } catch (RuntimeException e) {
            // a notification is never worth a run's outcome: the run has finished whatever happens here
            LOG.warn("posting the notification of run {} failed", event.runId(), e);
        }
    }
}
