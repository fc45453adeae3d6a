package dev.atrium.resources.internal;

import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ObjectFacet;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bytes each r2 bucket stores, for billing's {@code r2_byte_hours}: its provider's {@link ObjectFacet#stats}, one
 * sample per bucket and UTC hour, the first taken in that hour (its key names the hour, so later samples of the hour,
 * on any instance, count nothing).
 */
@Component(service = ResourceMetering.class, immediate = true, configurationPid = "dev.atrium.resources.metering")
@Designate(ocd = ResourceMetering.Config.class)
public class ResourceMetering {

    private static final Logger LOG = LoggerFactory.getLogger(ResourceMetering.class);
    private static final int PAGE = 500;

    @ObjectClassDefinition(name = "Atrium resources metering")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Seconds between samples of the bytes r2 buckets store (ATRIUM_RESOURCES_METER_S); 0: none")
        long sampleSeconds() default 600;
    }

    private final ResourceStore store;
    private final Providers providers;
    private final Runtime runtime;
    private final ScheduledExecutorService sampler = NamedThreads.scheduler("atrium-resources-metering");

    /** Where the samples go; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    @Activate
    public ResourceMetering(
            Config config, @Reference ResourceStore store, @Reference Providers providers, @Reference Runtime runtime) {
        this.store = store;
        this.providers = providers;
        this.runtime = runtime;
        if (config.sampleSeconds() > 0) {
            NamedThreads.repeat(
                    sampler,
                    this::sample,
                    Duration.ofSeconds(Math.min(config.sampleSeconds(), 30)),
                    Duration.ofSeconds(config.sampleSeconds()));
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        sampler.shutdownNow();
        sampler.awaitTermination(10, TimeUnit.SECONDS);
    }

    void sample() {
        UsageRecorder recorder = usage;
        if (recorder == null) {
            return;
        }
        Instant hour = Instant.now().truncatedTo(ChronoUnit.HOURS);
        for (int offset = 0; ; offset += PAGE) {
            List<ResourceRow> rows = store.ofType("r2", PAGE, offset);
            for (ResourceRow row : rows) {
                Optional<ResourceProvider> provider = providers.find(row.type, row.backend);
                if (provider.isEmpty() || !(provider.get() instanceof ObjectFacet objects)) {
                    continue; // its provider is not running now: the next sample counts it
                }
                try {
                    long bytes =
                            objects.stats(runtime.context(row, Access.READ)).totalBytes();
                    if (bytes > 0) {
                        recorder.record(new UsageEvent(
                                row.spaceId,
                                Meters.R2_BYTE_HOURS,
                                row.id,
                                bytes,
                                "r2:" + row.id + ":" + hour.getEpochSecond(),
                                hour));
                    }
                } catch (ResourceException | RuntimeException e) {
                    LOG.debug("resources: the bytes of {} were not sampled: {}", row.id, e.toString());
                }
            }
            if (rows.size() < PAGE) {
                return;
            }
        }
    }
}
