package dev.atrium.metrics.internal;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The server's one meter registry. Capabilities contribute meters as {@link MeterBinder} services (the whiteboard
 * pattern): a binder is bound when it appears and the meters it made are removed when it goes, so a bundle that is
 * updated or stopped leaves no stale series and holds no reference to the registry. A binder makes its meters inside
 * {@code bindTo}: that is how they are known to be its own.
 */
@Component(service = Metrics.class)
public class Metrics {

    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gc;
    private final Map<MeterBinder, List<Meter>> bound = new ConcurrentHashMap<>();
    /**
     * The thread running a binder's {@code bindTo} and the meters it added meanwhile (binders are bound one at a time);
     * meters other threads add then (a request's first timer) are not the binder's.
     */
    private volatile Thread bindingThread;

    private List<Meter> binding;

    private final boolean enabled;

    @Activate
    public Metrics(@Reference MetricsSettings settings) {
        enabled = settings.enabled;
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // Prometheus's conventions, which promtool checks: no "_count" suffix on a gauge, no abbreviated unit (the
        // process's CPU time is ProcessMemory's process_cpu_seconds_total, as the Prometheus clients name it)
        registry.config()
                .meterFilter(MeterFilter.deny(id -> id.getName().equals("process.cpu.time")))
                .meterFilter(new MeterFilter() {
                    @Override
                    public Meter.Id map(Meter.Id id) {
                        return id.getName().equals("system.cpu.count") ? id.withName("system.cpu.cores") : id;
                    }
                });
        registry.config().onMeterAdded(m -> {
            if (Thread.currentThread() == bindingThread) {
                binding.add(m);
            }
        });
        gc = new JvmGcMetrics();
        if (enabled) {
            new ClassLoaderMetrics().bindTo(registry);
            new JvmMemoryMetrics().bindTo(registry);
            gc.bindTo(registry);
            new JvmThreadMetrics().bindTo(registry);
            new ProcessorMetrics().bindTo(registry);
            new UptimeMetrics().bindTo(registry);
            new FileDescriptorMetrics().bindTo(registry);
            new ProcessMemory().bindTo(registry);
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    synchronized void addBinder(MeterBinder binder) {
        if (!enabled) {
            return;
        }
        List<Meter> meters = new ArrayList<>();
        binding = meters;
        bindingThread = Thread.currentThread();
        try {
            binder.bindTo(registry);
        } finally {
            bindingThread = null;
            binding = null;
        }
        bound.put(binder, meters);
    }

    synchronized void removeBinder(MeterBinder binder) {
        List<Meter> meters = bound.remove(binder);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
    }

    @Deactivate
    void stop() {
        gc.close();
        registry.close();
    }

    boolean enabled() {
        return enabled;
    }

    MeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition format, version 0.0.4. */
    String scrape() {
        return registry.scrape();
    }
}
