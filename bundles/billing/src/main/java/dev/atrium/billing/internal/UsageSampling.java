package dev.atrium.billing.internal;

import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageSampler;
import dev.atrium.kernel.api.NamedThreads;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks every {@link UsageSampler} what is held, every sampling interval, and records each sample as a usage event
 * keyed by its meter, workspace, dimension and UTC hour: the first sample of an hour counts, later ones (of this
 * instance or another) count nothing, so an hour is counted once whatever the interval and the number of instances.
 */
@Component(service = UsageSampling.class, immediate = true)
public class UsageSampling {

    private static final Logger LOG = LoggerFactory.getLogger(UsageSampling.class);

    private final UsageLedger ledger;
    private final List<UsageSampler> samplers = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService scheduler = NamedThreads.scheduler("billing-sampling");

    @Activate
    public UsageSampling(@Reference UsageLedger ledger, @Reference BillingSettings settings) {
        this.ledger = ledger;
        if (settings.sampleSeconds > 0) {
            NamedThreads.repeat(
                    scheduler,
                    this::sample,
                    Duration.ofSeconds(Math.min(settings.sampleSeconds, 30)),
                    Duration.ofSeconds(settings.sampleSeconds));
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addSampler(UsageSampler sampler) {
        samplers.add(sampler);
    }

    void removeSampler(UsageSampler sampler) {
        samplers.remove(sampler);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        scheduler.shutdownNow();
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
    }

    void sample() {
        Instant hour = Instant.now().truncatedTo(ChronoUnit.HOURS);
        for (UsageSampler sampler : samplers) {
            String meter = sampler.meter();
            if (!Meters.all().contains(meter)) {
                LOG.warn("a usage sampler names no meter billing knows: {}", meter);
                continue;
            }
            List<UsageSampler.Sample> samples;
            try {
                samples = sampler.sample();
            } catch (Exception e) {
                LOG.warn("the {} sampler failed; the next round asks again: {}", meter, e.toString());
                continue;
            }
            for (UsageSampler.Sample s : samples) {
                if (s.quantity() <= 0) {
                    continue;
                }
                String dimension = s.dimension() == null ? "" : s.dimension();
                ledger.record(new UsageEvent(
                        s.spaceId(),
                        meter,
                        dimension,
                        s.quantity(),
                        "sample:" + meter + ":" + s.spaceId() + ":" + dimension + ":" + hour.getEpochSecond(),
                        hour));
            }
        }
    }
}
