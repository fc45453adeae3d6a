package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Event;
import dev.atrium.streams.api.EventStreams;
import dev.atrium.streams.api.Feed;
import dev.atrium.streams.api.HubOptions;
import dev.atrium.streams.api.StreamHub;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * A run's events as one stream of the platform's event streams (a run is a stream, an event's position its id): job
 * and step changes, and the jobs' log output in chunks. Events are appended in the transaction that makes the change
 * ({@link ActionStore#append}) and handed to local subscribers once it committed ({@link #committed}); other instances'
 * subscribers hear of them on {@link ActionStore#EVENTS_CHANNEL}.
 */
@Component(service = RunEvents.class)
public class RunEvents {

    static final String RUN_COMPLETED = "run.completed";

    final StreamHub<Event> hub;
    private final List<Consumer<String>> endListeners = new CopyOnWriteArrayList<>();

    @Activate
    public RunEvents(@Reference ActionStore store, @Reference EventStreams streams) {
        this.hub = streams.open(new RunFeed(store), HubOptions.of("actions", ActionStore.EVENTS_CHANNEL));
    }

    @Deactivate
    void deactivate() {
        hub.close();
    }

    void committed(List<Event> events) {
        for (Event e : events) {
            hub.committed(e);
            if (RUN_COMPLETED.equals(e.type())) {
                endListeners.forEach(l -> l.accept(e.runId()));
            }
        }
    }

    /**
     * Who hears, with the run's id, that a run ended on this instance (a run whose last job ran on another instance ends
     * there: a listener that waits for one looks at the run now and then too).
     */
    void onRunEnded(Consumer<String> listener) {
        endListeners.add(listener);
    }

    /** Forgets a listener of {@link #onRunEnded} (its component stopped). */
    void forget(Consumer<String> listener) {
        endListeners.remove(listener);
    }

    private record RunFeed(ActionStore store) implements Feed<Event> {

        @Override
        public List<Event> after(String key, long position, int limit) {
            return store.events(key, position, limit);
        }

        @Override
        public String key(Event event) {
            return event.runId();
        }

        @Override
        public long position(Event event) {
            return event.position();
        }

        @Override
        public String type(Event event) {
            return event.type();
        }

        @Override
        public String json(Event event) {
            return "{\"id\":" + event.position() + ",\"type\":\"" + event.type() + "\",\"data\":" + event.data() + "}";
        }

        /** The end of the run's last attempt (a rerun's subscribers read on past the earlier attempts' ends). */
        @Override
        public boolean terminal(Event event) {
            return RUN_COMPLETED.equals(event.type()) && store.lastEnd(event.runId(), event.position());
        }

        @Override
        public boolean ended(String key) {
            return store.runEnded(key);
        }
    }
}
