package dev.atrium.storage.internal;

import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
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

/**
 * The bytes each workspace stores, for billing's {@code storage_byte_hours}: one sample per workspace and UTC hour, the
 * first taken in that hour (its key names the hour, so later samples of the hour, on any instance, count nothing).
 * The month's byte-hours divided by its hours is the average stored.
 */
@Component(service = StorageMetering.class, immediate = true, configurationPid = "dev.atrium.storage.metering")
@Designate(ocd = StorageMetering.Config.class)
public class StorageMetering {

    @ObjectClassDefinition(name = "Atrium storage metering")
    public @interface Config {
        @AttributeDefinition(
                description = "Seconds between samples of the bytes stored (ATRIUM_STORAGE_METER_S); 0: none")
        long sampleSeconds() default 600;
    }

    private final Sql sql;
    private final ScheduledExecutorService sampler = NamedThreads.scheduler("atrium-storage-metering");

    /** Where the samples go; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    @Activate
    public StorageMetering(
            Config config, @Reference DataSource dataSource, @Reference Storage storage /* its schema */) {
        this.sql = new Sql(dataSource);
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
        for (Map.Entry<String, Long> e : sql.list(
                "SELECT space_id, bytes FROM storage_usage WHERE bytes > 0",
                rs -> Map.entry(rs.getString(1), rs.getLong(2)))) {
            recorder.record(new UsageEvent(
                    e.getKey(),
                    Meters.STORAGE_BYTE_HOURS,
                    "",
                    e.getValue(),
                    "storage:" + e.getKey() + ":" + hour.getEpochSecond(),
                    hour));
        }
    }
}
