package dev.atrium.reminders.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.reminders.internal.ReminderStore.Reminder;
import dev.atrium.runs.api.RunStarter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What firing a reminder does: a {@code reminder.fired} notification to its workspace's owner and, when the reminder
 * asks for one, a run on its thread. Both services are referenced optionally and dynamically (their packages imported
 * optionally), as runs' {@code RunNotices} does: with notifications or runs disabled a reminder still fires (its row
 * records it) and what is missing is simply not done.
 */
@Component(service = ReminderFiring.class)
public class ReminderFiring {

    private static final Logger LOG = LoggerFactory.getLogger(ReminderFiring.class);

    private final ReminderStore store;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile Notifications notifications;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile RunStarter runs;

    @Activate
    public ReminderFiring(@Reference ReminderStore store) {
        this.store = store;
    }

    /** What a firing did: the notification's id, the run's id, or why the run did not start (each may be null). */
    record Fired(String notificationId, String runId, String runError) {}

    /** Fires {@code reminder} for {@code ownerPrincipalId} (the kernel's answer for its workspace). */
    Fired fire(Reminder reminder, String ownerPrincipalId, boolean manual) {
        String notification = notify(reminder, ownerPrincipalId, manual).orElse(null);
        if (reminder.run() == null) {
            return new Fired(notification, null, null);
        }
        RunStarter starter = runs;
        if (starter == null) {
            return new Fired(notification, null, "the runs capability is disabled");
        }
        try {
            String runId = starter.start(
                    ownerPrincipalId,
                    reminder.spaceId(),
                    reminder.run().threadId(),
                    reminder.run().input());
            store.recordRun(reminder.id(), runId);
            return new Fired(notification, runId, null);
        } catch (ApiException e) {
            // the thread was deleted, or is not the owner's: the reminder fired, its run could not start
            return new Fired(notification, null, e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("starting the run of reminder {} failed", reminder.id(), e);
            return new Fired(notification, null, "the run could not be started");
        }
    }

    private Optional<String> notify(Reminder reminder, String ownerPrincipalId, boolean manual) {
        Notifications to = notifications;
        if (to == null) {
            return Optional.empty();
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("reminder_id", reminder.id());
        data.put("manual", manual);
        Notice notice = Notice.toPrincipal(ownerPrincipalId, "reminder.fired", reminder.title())
                .inSpace(reminder.spaceId())
                .withLink("/api/reminders/" + reminder.id())
                .withData(data);
        try {
            return to.post(reminder.body() == null ? notice : notice.withBody(reminder.body()));
        } catch (RuntimeException e) {
            // the firing is recorded whatever happens here, as a run's outcome is whatever its notice does
            LOG.warn("posting the notification of reminder {} failed", reminder.id(), e);
            return Optional.empty();
        }
    }
}
