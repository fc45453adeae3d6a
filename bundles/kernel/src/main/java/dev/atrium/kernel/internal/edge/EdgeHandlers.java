package dev.atrium.kernel.internal.edge;

import dev.atrium.kernel.api.EdgeHandler;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Request;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link EdgeHandler}s registered now, in the order of their names. A name registered twice keeps its first
 * handler; the second is logged and not called.
 */
@Component(service = EdgeHandlers.class)
public class EdgeHandlers {

    private static final Logger LOG = LoggerFactory.getLogger(EdgeHandlers.class);

    record Named(String name, long serviceId, Request.Handler handler) {}

    private final Object lock = new Object();
    private final List<Named> registered = new ArrayList<>();
    private volatile List<Named> ordered = List.of();

    @Reference(
            service = Request.Handler.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            target = "(" + EdgeHandler.PROPERTY + "=*)")
    void add(Request.Handler handler, Map<String, Object> properties) {
        Named named = new Named(
                String.valueOf(properties.get(EdgeHandler.PROPERTY)), (Long) properties.get("service.id"), handler);
        synchronized (lock) {
            registered.add(named);
            publish();
        }
    }

    void remove(Request.Handler handler, Map<String, Object> properties) {
        Object id = properties.get("service.id");
        synchronized (lock) {
            registered.removeIf(n -> id.equals(n.serviceId()));
            publish();
        }
    }

    private void publish() {
        List<Named> byName = new ArrayList<>(registered);
        byName.sort(Comparator.comparing(Named::name).thenComparingLong(Named::serviceId));
        List<Named> unique = new ArrayList<>();
        for (Named n : byName) {
            if (!unique.isEmpty() && unique.get(unique.size() - 1).name().equals(n.name())) {
                LOG.warn(
                        "edge handler {} (service {}) is not called: the name is taken by service {}",
                        n.name(),
                        n.serviceId(),
                        unique.get(unique.size() - 1).serviceId());
                continue;
            }
            unique.add(n);
        }
        ordered = List.copyOf(unique);
    }

    List<Named> ordered() {
        return ordered;
    }
}
