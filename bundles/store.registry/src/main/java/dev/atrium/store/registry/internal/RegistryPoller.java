package dev.atrium.store.registry.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.store.registry.internal.RegistryStore.Entry;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Polls the outboxes of the stores a workspace subscribed to (a registry entry with {@code subscription_enabled}). A
 * subscription is outbox polling rather than an ActivityPub Follow: a Model B store has no inbox, and a workspace has
 * no actor of its own to follow with. Every instance may poll; an activity is recorded once per entry whichever
 * instance saw it first.
 */
@Component(service = RegistryPoller.class, immediate = true, configurationPid = "dev.atrium.store.registry")
@Designate(ocd = RegistryPoller.Config.class)
public class RegistryPoller {

    @ObjectClassDefinition(name = "Atrium store registry")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Seconds between two polls of a subscribed store's outbox (ATRIUM_STORE_REGISTRY_POLL_SECONDS)")
        long pollSeconds() default 900;

        @AttributeDefinition(description = "Seconds between two looks for subscriptions due for a poll")
        long tickSeconds() default 30;
    }

    private static final Logger LOG = LoggerFactory.getLogger(RegistryPoller.class);
    private static final int BATCH = 20;

    private final RegistryStore store;
    private final RemoteStores remotes;
    private final long pollSeconds;
    private final ScheduledExecutorService timer;

    @Activate
    public RegistryPoller(@Reference RegistryStore store, @Reference RemoteStores remotes, Config config) {
        this.store = store;
        this.remotes = remotes;
        this.pollSeconds = Math.max(1, config.pollSeconds());
        this.timer = NamedThreads.scheduler("atrium-store-registry-poll");
        long tick = Math.max(1, Math.min(config.tickSeconds(), pollSeconds));
        NamedThreads.repeat(timer, this::pollDue, Duration.ofSeconds(tick), Duration.ofSeconds(tick));
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        timer.shutdownNow();
        timer.awaitTermination(10, TimeUnit.SECONDS);
    }

    private void pollDue() {
        try {
            for (Entry e : store.duePolls(pollSeconds, BATCH)) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                try {
                    poll(store, remotes, e);
                } catch (ApiException ex) {
                    LOG.info("polling the store {} failed: {}", e.actorUrl(), ex.getMessage());
                    store.record(e, List.of()); // tried: wait a whole interval before the next attempt
                }
            }
        } catch (RuntimeException ex) {
            LOG.warn("polling subscribed stores failed", ex);
        }
    }

    /** Reads the entry's store outbox and records the activities not seen before; returns how many were new. */
    static int poll(RegistryStore store, RemoteStores remotes, Entry e) {
        RemoteStores.StoreActor actor = remotes.actor(URI.create(e.actorUrl()));
        Entry current = store.refreshed(e, actor);
        List<RegistryStore.Activity> activities = remotes.outbox(
                actor, page -> !store.knows(current, page.get(page.size() - 1).id()));
        return store.record(current, activities);
    }
}
