package dev.atrium.store.inventory.internal;

import dev.atrium.store.ap.api.LocalStores;
import java.util.HashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives the repositories' {@code atrium/repo/*} events and the federation core's inventory edits and hands them to the
 * {@link Publisher}, which keeps the activities in PostgreSQL before anything is delivered.
 */
@Component(
        service = {EventHandler.class, Events.class},
        property = {
            EventConstants.EVENT_TOPIC + "=atrium/repo/*",
            EventConstants.EVENT_TOPIC + "=" + LocalStores.INVENTORY_ADDED,
            EventConstants.EVENT_TOPIC + "=" + LocalStores.INVENTORY_REMOVED,
            EventConstants.EVENT_TOPIC + "=" + LocalStores.STORE_DELETED
        })
public class Events implements EventHandler {

    private static final Logger LOG = LoggerFactory.getLogger(Events.class);

    private final Publisher publisher;

    @Activate
    public Events(@Reference Outboxes outboxes, @Reference Model model, @Reference FanOut fanOut) {
        this.publisher = new Publisher(outboxes, model, fanOut::wake);
    }

    Publisher publisher() {
        return publisher;
    }

    @Override
    public void handleEvent(Event event) {
        Map<String, Object> props = new HashMap<>();
        for (String name : event.getPropertyNames()) {
            props.put(name, event.getProperty(name));
        }
        try {
            if (event.getTopic().startsWith("atrium/repo/")) {
                publisher.repositoryEvent(event.getTopic(), props);
            } else if (event.getTopic().equals(LocalStores.STORE_DELETED)) {
                publisher.storeDeleted(String.valueOf(props.get(LocalStores.STORE_SLUG)));
            } else {
                publisher.inventoryEvent(event.getTopic(), props);
            }
        } catch (RuntimeException e) {
            LOG.error("could not publish {} {}: {}", event.getTopic(), props.get("repo_id"), e.toString(), e);
        }
    }
}
