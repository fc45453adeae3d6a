package dev.atrium.reminders.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.reminders.internal.ReminderStore.Reminder;

/**
 * What firing a reminder does: a {@code reminder.fired} notification to its workspace's owner. The {@link Notifications}
 * service is referenced optionally and dynamically (its package imported optionally), as runs' {@code RunNotices} does:
 * with the notifications capability disabled a reminder still fires (its row records it) and nothing is posted.
 */
@Component(service = ReminderFiring.class)
public class ReminderFiring {

    private static final Logger LOG = LoggerFactory.getLogger(ReminderFiring.class);

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile Notifications notifications;

    /**
     * Posts the notification for {@code reminder} to {@code ownerPrincipalId} (the kernel's answer for its workspace).
     *
     * @return the notification's id; empty when nothing was posted (notifications disabled, turned off by the owner)
     */
    Optional<String> fire(Reminder reminder, String ownerPrincipalId, boolean manual) {
        Notifications to = notifications;
        if (to == null) {
            return Optional.empty();
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("reminder_id", reminder.id());
        data.put("manual", manual);
        Notice notice = Notice.toPrincipal(ownerPrincipalId, "reminder.fired", reminder.title()).inSpace(reminder.spaceId())
                .withLink("/api/reminders/" + reminder.id()).withData(data);
        try {
            return to.post(reminder.body() == null ? notice : notice.withBody(reminder.body()));
        } catch (RuntimeException e) {
            // the firing is recorded whatever happens here, as a run's outcome is whatever its notice does
            LOG.warn("posting the notification of reminder {} failed", reminder.id(), e);
            return Optional.empty();
        }
    }
}
