package dev.atrium.notifications.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.notifications.internal.NotificationStore.Notification;

/**
 * This instance's live notification streams, fed the way the runs capability feeds run events (its
 * {@code EventHub}): a notification is a row with a dense position in its Principal's stream, its transaction
 * announces {@code principal:seq} with {@code pg_notify}, the kernel's listening connection hears it, and every
 * subscriber gets its Principal's notifications from the table, in order, without gaps or duplicates, whichever
 * instance posted them. Those posted here go to local subscribers from memory once committed.
 */
@Component(service = NotificationHub.class)
public class NotificationHub {

    private static final Logger LOG = LoggerFactory.getLogger(NotificationHub.class);
    static final int PAGE = 500;
    static final long HEARTBEAT_MILLIS = 15_000;

    /** Where a subscription's notifications go. Implementations must not block. */
    interface Sink {
        /** False when the client is gone. */
        boolean send(Notification n);

        boolean heartbeat();

        void close();

        /** More follow at once: until {@link #release}, the sink may keep them for one write. */
        default void hold() {
        }

        default void release() {
        }
    }

    final class Subscription {
        final String principalId;
        final Sink sink;
        final int lane;
        private volatile long last;
        private volatile boolean closed;

        Subscription(String principalId, long after, Sink sink, int lane) {
            this.principalId = principalId;
            this.last = after;
            this.sink = sink;
            this.lane = lane;
        }

        synchronized void deliver(List<Notification> ns) {
            if (ns.size() == 1) {
                deliverEach(ns);
                return;
            }
            sink.hold();
            try {
                deliverEach(ns);
            } finally {
                sink.release();
            }
        }

        private void deliverEach(List<Notification> ns) {
            for (int i = 0, size = ns.size(); i < size && !closed; i++) {
                Notification n = ns.get(i);
                // a gap (a notification raced the backlog): fill it from the table, in order
                for (long before = -1; !closed && n.seq() > last + 1 && last != before;) {
                    before = last;
                    deliver(store.after(principalId, last, (int) Math.min(PAGE, n.seq() - last - 1)));
                }
                if (closed || n.seq() <= last) {
                    continue;
                }
                if (!sink.send(n)) {
                    close();
                    return;
                }
                last = n.seq();
            }
        }

        void close() {
            if (closed) {
                return;
            }
            closed = true;
            channels.computeIfPresent(principalId, (k, subs) -> {
                subs.remove(this);
                if (subs.isEmpty()) {
                    deliveredHere.remove(principalId);
                    return null;
                }
                return subs;
            });
            try {
                sink.close();
            } catch (RuntimeException e) {
                LOG.debug("closing a notification subscriber", e);
            }
        }

        long last() {
            return last;
        }

        boolean closed() {
            return closed;
        }
    }

    private final NotificationStore store;
    private final Map<String, List<Subscription>> channels = new ConcurrentHashMap<>();
    private final Map<String, Long> deliveredHere = new ConcurrentHashMap<>();
    private final ExecutorService fanout = Executors.newSingleThreadExecutor(r -> new Thread(r, "atrium-notifications-fanout"));
    /** Subscribers are split over lanes (one thread each) so that one notification's writes use every processor. */
    private final Lane[] lanes;
    private final AtomicInteger nextLane = new AtomicInteger();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "atrium-notifications-heartbeat"));
    private final DatabaseChannels.Subscription listened;
    /** Per Principal, how far the notifications heard and not yet fanned out go (0: unknown, read all). */
    private final Map<String, Long> heard = new ConcurrentHashMap<>();
    private final AtomicBoolean fanOutQueued = new AtomicBoolean();
    private final Consumer<Notification> committedHere = this::committedHere;

    @Activate
    public NotificationHub(@Reference NotificationStore store, @Reference DatabaseChannels databaseChannels) {
        this.store = store;
        this.lanes = new Lane[Math.max(1, Math.min(16, Runtime.getRuntime().availableProcessors()))];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane("atrium-notifications-lane-" + i);
        }
        store.onCommitted(committedHere);
        listened = databaseChannels.listen(NotificationStore.CHANNEL, new DatabaseChannels.Listener() {
            @Override
            public void listening() {
                // anything missed while no one listened
                channels.keySet().forEach(p -> heard.put(p, 0L));
                queueFanOut();
            }

            @Override
            public void notified(String payload) {
                heard(payload);
            }
        });
        timer.scheduleWithFixedDelay(this::heartbeats, HEARTBEAT_MILLIS, HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        store.removeCommitted(committedHere);
        listened.close();
        timer.shutdownNow();
        fanout.shutdownNow();
        for (Lane lane : lanes) {
            lane.thread.shutdownNow();
        }
        for (List<Subscription> subs : channels.values()) {
            for (Subscription s : subs) {
                s.close();
            }
        }
        channels.clear();
        deliveredHere.clear();
    }

    /** Subscribes to a Principal's notifications after stream position {@code afterSeq}: the backlog, then live ones. */
    Subscription subscribe(String principalId, long afterSeq, Sink sink) {
        Subscription s = new Subscription(principalId, afterSeq, sink, Math.floorMod(nextLane.getAndIncrement(), lanes.length));
        channels.compute(principalId, (k, v) -> {
            List<Subscription> subs = v == null ? new CopyOnWriteArrayList<>() : v;
            subs.add(s);
            return subs;
        });
        while (!s.closed()) {
            long before = s.last();
            List<Notification> page = store.after(principalId, before, PAGE);
            s.deliver(page);
            if (page.size() < PAGE || s.last() == before) {
                break;
            }
        }
        return s;
    }

    int subscribers() {
        return channels.values().stream().mapToInt(List::size).sum();
    }

    private void heartbeats() {
        for (List<Subscription> subs : channels.values()) {
            for (Subscription s : subs) {
                try {
                    if (!s.sink.heartbeat()) {
                        s.close();
                    }
                } catch (RuntimeException e) {
                    s.close();
                }
            }
        }
    }

    private void committedHere(Notification n) {
        if (channels.computeIfPresent(n.principalId(), (p, subs) -> {
            deliveredHere.merge(p, n.seq(), Math::max);
            return subs;
        }) != null) {
            deliver(n.principalId(), List.of(n));
        }
    }

    /** A notification said the Principal's stream reached {@code upTo} (0: unknown). */
    private void fanOut(String principalId, long upTo) {
        List<Subscription> subs = channels.get(principalId);
        if (subs == null || subs.isEmpty() || upTo > 0 && upTo <= deliveredHere.getOrDefault(principalId, 0L)) {
            return;
        }
        long from = subs.stream().mapToLong(Subscription::last).min().orElse(0);
        while (upTo <= 0 || from < upTo) {
            List<Notification> page = store.after(principalId, from, PAGE);
            deliver(principalId, page);
            if (page.size() < PAGE) {
                return;
            }
            from = page.get(page.size() - 1).seq();
        }
    }

    /** Each lane writes the notifications to its share of the Principal's subscribers. */
    private void deliver(String principalId, List<Notification> ns) {
        List<Subscription> subs = channels.get(principalId);
        if (subs == null || ns.isEmpty()) {
            return;
        }
        List<List<Subscription>> byLane = new ArrayList<>(lanes.length);
        for (int i = 0; i < lanes.length; i++) {
            byLane.add(new ArrayList<>());
        }
        for (Subscription s : subs) {
            byLane.get(s.lane).add(s);
        }
        for (int i = 0; i < lanes.length; i++) {
            List<Subscription> share = byLane.get(i);
            if (share.isEmpty()) {
                continue;
            }
            try {
                lanes[i].add(principalId, share, ns);
            } catch (RejectedExecutionException e) {
                return; // stopping
            }
        }
    }

    /**
     * One fan-out thread and the notifications waiting for it, as the run streams' lanes: what reaches a lane while
     * it still writes earlier ones goes to each subscriber in one write, so a lane that fell behind (a burst, a
     * moment without CPU) catches up in one pass over its subscribers rather than one pass per notification.
     */
    private static final class Lane implements Runnable {
        private record Batch(String principalId, List<Subscription> subs, List<Notification> ns) {
        }

        final ExecutorService thread;
        private List<Batch> waiting = new ArrayList<>();
        private boolean scheduled;

        Lane(String name) {
            this.thread = Executors.newSingleThreadExecutor(r -> new Thread(r, name));
        }

        void add(String principalId, List<Subscription> subs, List<Notification> ns) {
            synchronized (this) {
                waiting.add(new Batch(principalId, subs, ns));
                if (scheduled) {
                    return;
                }
                scheduled = true;
            }
            thread.execute(this);
        }

        @Override
        public void run() {
            List<Batch> batches;
            synchronized (this) {
                batches = waiting;
                waiting = new ArrayList<>();
                scheduled = false;
            }
            // each Principal's batches as one: its subscribers skip what they have and fill gaps in order
            Map<String, List<Batch>> byPrincipal = new LinkedHashMap<>();
            for (Batch b : batches) {
                byPrincipal.computeIfAbsent(b.principalId, k -> new ArrayList<>()).add(b);
            }
            for (List<Batch> group : byPrincipal.values()) {
                List<Notification> ns = group.get(0).ns;
                java.util.Collection<Subscription> subs = group.get(0).subs;
                if (group.size() > 1) {
                    ns = new ArrayList<>();
                    subs = new java.util.LinkedHashSet<>();
                    for (Batch b : group) {
                        ns.addAll(b.ns);
                        subs.addAll(b.subs);
                    }
                    ns.sort(java.util.Comparator.comparingLong(Notification::seq));
                }
                for (Subscription s : subs) {
                    try {
                        s.deliver(ns);
                    } catch (RuntimeException e) {
                        LOG.warn("delivering notifications of {} failed", group.get(0).principalId, e);
                        s.close();
                    }
                }
            }
        }
    }

    /** A notification {@code principal:seq}: merged with those not yet fanned out, which one task on the fanout thread takes. */
    private void heard(String payload) {
        int colon = payload.lastIndexOf(':');
        long seq;
        try {
            seq = colon > 0 ? Long.parseLong(payload.substring(colon + 1)) : 0;
        } catch (NumberFormatException e) {
            seq = 0;
        }
        String principalId = colon > 0 ? payload.substring(0, colon) : payload;
        if (channels.containsKey(principalId)) {
            heard.merge(principalId, seq, (a, b) -> a == 0 || b == 0 ? 0 : Math.max(a, b));
            queueFanOut();
        }
    }

    private void queueFanOut() {
        if (fanOutQueued.compareAndSet(false, true)) {
            try {
                fanout.execute(this::fanOutHeard);
            } catch (RejectedExecutionException e) {
                // stopping
            }
        }
    }

    private void fanOutHeard() {
        fanOutQueued.set(false);
        for (String principalId : List.copyOf(heard.keySet())) {
            Long upTo = heard.remove(principalId);
            if (upTo != null && channels.containsKey(principalId)) {
                fanOut(principalId, upTo);
            }
        }
    }
}
