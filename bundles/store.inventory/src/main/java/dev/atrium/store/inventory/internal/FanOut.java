package dev.atrium.store.inventory.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.store.ap.api.Deliveries;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Queues committed activities to their audience through the core's {@link Deliveries}: each follower of the actor gets
 * a copy made absolute on the base it followed by, signed as the actor on that base; an Accept goes to its one inbox.
 * One thread, woken when an activity is kept and every second besides (for activities another instance kept, or a
 * restart left); rows are claimed with {@code SKIP LOCKED}, so instances share the work. Event handlers and inboxes only
 * write rows: a slow fan-out to many followers never holds them.
 */
@Component(service = FanOut.class)
public class FanOut {

    private static final Logger LOG = LoggerFactory.getLogger(FanOut.class);
    /** Activities claimed per transaction: each may mean a thousand followers, so transactions stay short. */
    private static final int BATCH = 10;

    private static final int FOLLOWERS_PAGE = 1000;

    private final Outboxes outboxes;
    private final Deliveries deliveries;
    private final ScheduledExecutorService thread;
    private final AtomicBoolean woken = new AtomicBoolean();

    @Activate
    public FanOut(@Reference Outboxes outboxes, @Reference Deliveries deliveries) {
        this.outboxes = outboxes;
        this.deliveries = deliveries;
        this.thread = NamedThreads.scheduler("atrium-ap-fanout");
        NamedThreads.repeat(thread, this::drainQuietly, Duration.ofSeconds(1), Duration.ofSeconds(1));
    }

    /** Without its own thread: {@link #drain} is called by the test. */
    FanOut(Outboxes outboxes, Deliveries deliveries, boolean noThread) {
        this.outboxes = outboxes;
        this.deliveries = deliveries;
        this.thread = null;
    }

    @Deactivate
    void stop() throws InterruptedException {
        thread.shutdownNow();
        if (!thread.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.warn("the fan-out thread did not stop within 10 s");
        }
    }

    /** Asks for a fan-out now (an activity was just kept). */
    void wake() {
        if (thread == null || !woken.compareAndSet(false, true)) {
            return;
        }
        try {
            thread.execute(this::drainQuietly);
        } catch (RejectedExecutionException stopping) {
            woken.set(false);
        }
    }

    private void drainQuietly() {
        woken.set(false);
        try {
            drain();
        } catch (RuntimeException e) {
            LOG.warn("federation fan-out: {}", e.toString());
        }
    }

    /** Queues every pending activity; returns how many. */
    int drain() {
        int total = 0;
        for (int n; (n = outboxes.fanOut(BATCH, this::queue)) > 0; ) {
            total += n;
            if (Thread.currentThread().isInterrupted()) {
                break;
            }
        }
        return total;
    }

    private void queue(Outboxes.Pending p) {
        Outboxes.Stored s = p.activity();
        if (p.deliverTo() != null) {
            send(s, p.deliverBase(), p.deliverTo());
            return;
        }
        long offset = 0;
        while (true) {
            List<Outboxes.Follower> page = outboxes.followers(s.actorPath(), FOLLOWERS_PAGE, offset);
            for (Outboxes.Follower f : page) {
                send(s, f.base(), f.inbox());
            }
            if (page.size() < FOLLOWERS_PAGE) {
                break;
            }
            offset += page.size();
        }
        if (deletesItsActor(s)) {
            // the actor is gone: whoever followed it does not follow a later actor of the same name
            outboxes.dropFollowers(s.actorPath());
        }
    }

    /** A {@code Delete} of the actor itself (a deleted repository or store), not of a tag. */
    static boolean deletesItsActor(Outboxes.Stored s) {
        return s.type().equals("Delete")
                && s.actorPath().equals(s.template().path("object").path("id").asText());
    }

    private void send(Outboxes.Stored s, String base, String inbox) {
        try {
            byte[] body = Outboxes.write(Outboxes.render(s.template(), base)).getBytes(StandardCharsets.UTF_8);
            deliveries.enqueue(base + s.actorPath(), URI.create(inbox), body);
        } catch (IllegalArgumentException e) {
            LOG.warn("could not queue {} to {}: {}", s.id(), inbox, e.toString());
        } catch (dev.atrium.kernel.api.ApiException e) {
            if (e.status() >= 500) {
                throw e; // the database: the batch is claimed again
            }
            // what a peer's document named cannot be stored (say, a NUL): skipped, so it never blocks the others
            LOG.warn("could not queue {} to {}: {}", s.id(), inbox, e.getMessage());
        }
    }
}
