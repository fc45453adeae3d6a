package dev.atrium.reminders.internal;

import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.reminders.internal.ReminderStore.Claimed;
import java.util.List;
import java.util.Optional;
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
 * Fires due reminders: one thread per instance polls the table, claims due rows with {@code FOR UPDATE SKIP LOCKED}
 * and moves each one's next firing past now in the same transaction (so instances never fire one occurrence twice,
 * and occurrences missed while no instance ran fire once), then posts. Whether a reminder may fire is the kernel's
 * answer: {@link SpaceDirectory#byId} finds its workspace only while the workspace, its owning Principal and their
 * owner witness are all active; otherwise the occurrence is skipped ({@code last_outcome: skipped_inactive}).
 */
@Component(
        service = {},
        immediate = true,
        configurationPid = "dev.atrium.reminders",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = ReminderScheduler.Config.class)
public class ReminderScheduler {

    @ObjectClassDefinition(name = "Atrium reminders")
    public @interface Config {
        @AttributeDefinition(description = "Milliseconds between looks for due reminders")
        long pollMillis() default 1_000;
    }

    private static final Logger LOG = LoggerFactory.getLogger(ReminderScheduler.class);
    private static final int BATCH = 50;

    private final ReminderStore store;
    private final ReminderFiring firing;
    private final SpaceDirectory spaces;
    private final long pollMillis;
    private final Thread thread;
    private volatile boolean running = true;

    @Activate
    public ReminderScheduler(
            @Reference ReminderStore store,
            @Reference ReminderFiring firing,
            @Reference SpaceDirectory spaces,
            Config config) {
        this.store = store;
        this.firing = firing;
        this.spaces = spaces;
        this.pollMillis = Math.max(50, config.pollMillis());
        this.thread = new Thread(this::loop, "atrium-reminders");
        thread.setDaemon(true);
        thread.start();
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(10_000);
        if (thread.isAlive()) {
            LOG.warn("the reminder scheduler did not stop within 10 s");
        }
    }

    private void loop() {
        while (running) {
            try {
                while (running && fireDue() == BATCH) {
                    // a full batch: more may be due
                }
            } catch (RuntimeException e) {
                if (running) {
                    LOG.warn("looking for due reminders failed; trying again in {} ms", pollMillis, e);
                }
            }
            try {
                // every instance looks on the same wall-clock ticks, so a reminder fires on the first tick after it is
                // due whichever instance claims it (the claim, not luck in timing, keeps it to one)
                Thread.sleep(pollMillis - System.currentTimeMillis() % pollMillis);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One claim: fires what it claimed; returns how many rows it claimed. */
    int fireDue() {
        List<Claimed> claimed =
                store.claimDue(BATCH, r -> spaces.byId(r.spaceId()).isPresent());
        for (Claimed c : claimed) {
            if (!c.fire()) {
                continue;
            }
            // asked again after the commit: the owner is whoever the kernel says now
            Optional<SpaceRef> space = spaces.byId(c.reminder().spaceId());
            space.ifPresent(s -> firing.fire(c.reminder(), s.ownerPrincipalId(), false));
        }
        return claimed.size();
    }
}
