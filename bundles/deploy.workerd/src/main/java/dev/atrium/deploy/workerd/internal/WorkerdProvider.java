package dev.atrium.deploy.workerd.internal;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;

import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentProvider;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.EgressGuard;

/**
 * The workerd deployment provider: runs {@code worker-bundle} deployments in supervised {@code workerd serve} child
 * processes ({@link WorkerdRuntime}). Its configurations (they hold secrets) live in {@code <data>/deploy-workerd/}.
 * A new configuration re-activates it, which stops what ran: the caller applies its deployments again when the
 * service comes back.
 */
@Component(service = DeploymentProvider.class, configurationPid = "dev.atrium.deploy.workerd",
        property = { DeploymentProvider.NAME + "=workerd", DeploymentProvider.KIND + "=worker-bundle" })
@Designate(ocd = WorkerdConfig.class)
public class WorkerdProvider implements DeploymentProvider {

    private final WorkerdRuntime runtime;

    @Activate
    public WorkerdProvider(WorkerdConfig config, @Reference EgressGuard egress) {
        // workers' outbound connections get the egress guard's policy: its ranges become workerd's deny list, asked
        // again for every configuration written (the machine's addresses may have changed)
        this.runtime = new WorkerdRuntime(new WorkerdRuntime.Settings(config.binary(),
                Path.of(config.dataDirectory()).toAbsolutePath().resolve("deploy-workerd"),
                Duration.ofMillis(Math.max(0, config.drainGraceMillis())), config.compatibilityDate(),
                Duration.ofSeconds(Math.max(1, config.startTimeoutSeconds())), config.logLinesPerService(), egress::refusedRanges));
    }

    @Deactivate
    void deactivate() {
        runtime.close();
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
