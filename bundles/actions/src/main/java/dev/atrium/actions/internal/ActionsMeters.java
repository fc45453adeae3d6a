package dev.atrium.actions.internal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The Actions queue's depth for the metrics capability, counted when the figures are scraped. */
@Component(service = MeterBinder.class)
public class ActionsMeters implements MeterBinder {

    private final ActionStore store;

    @Activate
    public ActionsMeters(@Reference ActionStore store) {
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("atrium.actions.jobs.queued", this, ActionsMeters::queuedJobs)
                .description("Actions jobs waiting for a runner")
                .register(registry);
    }

    private double queuedJobs() {
        try {
            return store.sql()
                    .one("SELECT count(*) FROM action_jobs WHERE status = 'queued'", rs -> rs.getLong(1))
                    .orElse(0L);
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }
}
