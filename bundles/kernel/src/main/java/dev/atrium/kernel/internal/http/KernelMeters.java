package dev.atrium.kernel.internal.http;

import dev.atrium.kernel.internal.db.DatabaseListener;
import dev.atrium.kernel.internal.edge.RelayRoutes;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The kernel's figures for the metrics capability: the update gate's holds and the requests they held, and the
 * database listener's lost connections. Read from the parts' own counters when scraped; nothing here is counted twice.
 */
@Component(service = MeterBinder.class)
public class KernelMeters implements MeterBinder {

    private final UpdateGate gate;
    private final DatabaseListener listener;
    private final ApplicationRebuilds rebuilds;
    private final RelayRoutes relay;

    @Activate
    public KernelMeters(
            @Reference UpdateGate gate,
            @Reference DatabaseListener listener,
            @Reference ApplicationRebuilds rebuilds,
            @Reference RelayRoutes relay) {
        this.relay = relay;
        this.gate = gate;
        this.listener = listener;
        this.rebuilds = rebuilds;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        FunctionCounter.builder("atrium.update.gate.holds", gate, UpdateGate::holds)
                .description("Times API requests were held while a bundle changed")
                .register(registry);
        FunctionCounter.builder("atrium.update.gate.held.requests", gate, UpdateGate::heldRequests)
                .description("API requests that waited at the closed update gate and were let in")
                .register(registry);
        FunctionCounter.builder("atrium.update.gate.held", gate, UpdateGate::heldSeconds)
                .description("Seconds API requests waited at the closed update gate, in all")
                .baseUnit("seconds")
                .register(registry);
        FunctionCounter.builder("atrium.update.gate.refused.requests", gate, UpdateGate::refusedRequests)
                .description("API requests answered 503 because the update gate stayed closed past its bound")
                .register(registry);
        Gauge.builder("atrium.update.gate.holding", gate, g -> g.holding() ? 1 : 0)
                .description("1 while API requests are being held")
                .register(registry);
        FunctionCounter.builder("atrium.jaxrs.rebuilds", rebuilds, ApplicationRebuilds::rebuilds)
                .description("Times the JAX-RS application was rebuilt (a resource or extension came or went)")
                .register(registry);
        FunctionCounter.builder("atrium.jaxrs.rebuild.held.requests", rebuilds, ApplicationRebuilds::heldRequests)
                .description("Requests that waited for a rebuild of the JAX-RS application to end")
                .register(registry);
        FunctionCounter.builder("atrium.relay.requests", relay, RelayRoutes::relayed)
                .description("Requests the edge relayed straight to a deployed service's upstream")
                .register(registry);
        FunctionCounter.builder("atrium.relay.handovers", relay, RelayRoutes::handedOver)
                .description("Connections the edge's relay handed to the servlet stack, at a request it did not relay")
                .register(registry);
        FunctionCounter.builder("atrium.db.listener.reconnects", listener, DatabaseListener::reconnects)
                .description("Times the LISTEN connection was lost and listened again")
                .register(registry);
        Gauge.builder("atrium.db.listener.subscriptions", listener, DatabaseListener::subscriptions)
                .description("Channels bundles listen on")
                .register(registry);
    }
}
