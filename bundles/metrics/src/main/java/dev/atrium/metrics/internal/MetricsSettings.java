package dev.atrium.metrics.internal;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of metrics (ConfigAdmin pid {@code dev.atrium.metrics}); where the operator's configuration
 * sets nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value (bundles/config).
 */
@Component(
        service = MetricsSettings.class,
        configurationPid = "dev.atrium.metrics",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = MetricsSettings.Config.class)
public class MetricsSettings {

    @ObjectClassDefinition(name = "Atrium metrics")
    public @interface Config {
        @AttributeDefinition(
                description = "Whether requests are measured and /metrics answers (ATRIUM_METRICS, true or false)")
        boolean enabled() default true;

        @AttributeDefinition(
                description = "Seconds between two samples of the console's charts, which keep the last hour"
                        + " (ATRIUM_METRICS_SERIES_INTERVAL_S, 1 to 60)",
                min = "1",
                max = "60")
        int seriesIntervalSeconds() default 5;
    }

    final boolean enabled;
    final int seriesIntervalSeconds;

    @Activate
    public MetricsSettings(Config config) {
        enabled = config.enabled();
        seriesIntervalSeconds = Math.min(60, Math.max(1, config.seriesIntervalSeconds()));
    }
}
