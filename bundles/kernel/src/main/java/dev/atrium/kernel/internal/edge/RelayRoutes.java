package dev.atrium.kernel.internal.edge;

import dev.atrium.kernel.api.RelayRouter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The {@link RelayRouter}s registered now; a request is relayed by the first that takes it. */
@Component(service = RelayRoutes.class)
public class RelayRoutes {

    private static final Logger LOG = LoggerFactory.getLogger(RelayRoutes.class);

    private final List<RelayRouter> routers = new CopyOnWriteArrayList<>();
    final LongAdder relayed = new LongAdder();
    final LongAdder handedOver = new LongAdder();

    /** Requests the relay has passed to their upstream. */
    public double relayed() {
        return relayed.sum();
    }

    /** Connections the relay handed to Jetty's HTTP/1.1 (at a request no router took). */
    public double handedOver() {
        return handedOver.sum();
    }

    @Reference(
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addRouter(RelayRouter router) {
        routers.add(router);
    }

    void removeRouter(RelayRouter router) {
        routers.remove(router);
    }

    /** Where the request goes, or null for Jetty's HTTP stack. A router that fails declines. */
    RelayRouter.Relay route(String host, String method, String target) {
        for (RelayRouter r : routers) {
            try {
                RelayRouter.Relay relay = r.route(host, method, target);
                if (relay != null) {
                    return relay;
                }
            } catch (RuntimeException e) {
                LOG.debug("a relay router failed on {} {}: {}", host, target, e.toString());
            }
        }
        return null;
    }
}
