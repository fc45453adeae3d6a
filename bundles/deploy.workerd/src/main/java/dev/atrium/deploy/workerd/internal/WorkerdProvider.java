package dev.atrium.deploy.workerd.internal;

import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentProvider;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.Keepsakes;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The workerd deployment provider: runs {@code worker-bundle} deployments in supervised {@code workerd serve} child
 * processes ({@link WorkerdRuntime}). Its configurations (they hold secrets) live in {@code <data>/deploy-workerd/}.
 * When the bundle is updated or refreshed (or a new configuration re-activates the component), the workerd processes
 * are not stopped: they are handed to the next revision through the kernel's {@link Keepsakes}, which adopts them, so
 * what the workers serve (requests in flight, WebSockets) goes on. Stopped for good (a feature disabled, the server
 * stopping), it stops them.
 */
@Component(
        service = {DeploymentProvider.class, io.micrometer.core.instrument.binder.MeterBinder.class},
        configurationPid = "dev.atrium.deploy.workerd",
        property = {DeploymentProvider.NAME + "=workerd", DeploymentProvider.KIND + "=worker-bundle"})
@Designate(ocd = WorkerdConfig.class)
public class WorkerdProvider implements DeploymentProvider, io.micrometer.core.instrument.binder.MeterBinder {

    /** workerd's processes for the metrics capability. */
    @Override
    public void bindTo(io.micrometer.core.instrument.MeterRegistry registry) {
        io.micrometer.core.instrument.Gauge.builder("atrium.workerd.processes", runtime, WorkerdRuntime::processesUp)
                .description("workerd processes serving deployments now")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder(
                        "atrium.workerd.restarts", runtime, WorkerdRuntime::restarts)
                .description("workerd processes restarted after they died")
                .register(registry);
    }

    /** The keepsake that holds the processes between two revisions. */
    static final String PROCESSES = "workerd-processes";
    /** How long the processes wait for the next revision before the kernel stops them. */
    private static final Duration HANDOVER = Duration.ofSeconds(60);

    private final WorkerdRuntime runtime;
    private final Keepsakes keepsakes;
    private final BundleContext context;

    @Activate
    public WorkerdProvider(
            WorkerdConfig config,
            @Reference EgressGuard egress,
            @Reference Keepsakes keepsakes,
            BundleContext context) {
        this.keepsakes = keepsakes;
        this.context = context;
        // workers' outbound connections get the egress guard's policy: its ranges become workerd's deny list, asked
        // again for every configuration written (the machine's addresses may have changed)
        this.runtime = new WorkerdRuntime(
                new WorkerdRuntime.Settings(
                        config.binary(),
                        Path.of(config.dataDirectory()).toAbsolutePath().resolve("deploy-workerd"),
                        Duration.ofMillis(Math.max(0, config.drainGraceMillis())),
                        config.compatibilityDate(),
                        Duration.ofSeconds(Math.max(1, config.startTimeoutSeconds())),
                        config.logLinesPerService(),
                        egress::refusedRanges),
                keepsakes.take(PROCESSES).orElse(null));
    }

    @Deactivate
    void deactivate() {
        if (Keepsakes.restarting(context)) {
            keepsakes.keep(PROCESSES, runtime.handOver(), HANDOVER);
        } else {
            runtime.close();
        }
    }

    @Override
    public void validate(Deployment deployment) throws DeploymentException {
        runtime.validate(deployment);
    }

    @Override
    public void apply(List<Deployment> deployments) throws DeploymentException {
        runtime.apply(deployments);
    }

    @Override
    public Optional<URI> endpoint(String deploymentId) {
        return runtime.endpoint(deploymentId);
    }

    @Override
    public Health health() {
        return runtime.health();
    }

    @Override
    public List<LogLine> logs(String serviceId, long afterSeq, int limit) {
        return runtime.logs(serviceId, afterSeq, limit);
    }

    @Override
    public AutoCloseable follow(String serviceId, Consumer<LogLine> sink) {
        return runtime.follow(serviceId, sink);
    }
}
