package dev.atrium.containers.podman.internal;

import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentProvider;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.HealthDetail;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * The {@code podman} deployment provider: runs {@code container-image} deployments of services (an uploaded OCI or
 * docker archive) as containers of the bundle's shared podman service ({@link ContainerServices}). Deactivated (the
 * bundle or the server stopping), it removes its containers: unlike workerd's processes they are not handed to the
 * next revision, and the services capability starts them again when the provider is back. Its health is
 * {@code /healthz}'s {@code details.services.podman}.
 */
@Component(
        service = {DeploymentProvider.class, HealthDetail.class, io.micrometer.core.instrument.binder.MeterBinder.class
        },
        configurationPid = "dev.atrium.containers.podman",
        property = {DeploymentProvider.NAME + "=podman", DeploymentProvider.KIND + "=container-image"})
public class PodmanDeployer
        implements DeploymentProvider, HealthDetail, io.micrometer.core.instrument.binder.MeterBinder {

    private final ContainerServices services;

    /** Container services for the metrics capability. */
    @Override
    public void bindTo(io.micrometer.core.instrument.MeterRegistry registry) {
        io.micrometer.core.instrument.Gauge.builder(
                        "atrium.containers.running", services, ContainerServices::containersUp)
                .description("Containers of deployed services running now (podman)")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder(
                        "atrium.containers.restarts", services, ContainerServices::restarts)
                .description("Containers of deployed services restarted after they stopped")
                .register(registry);
    }

    @Activate
    public PodmanDeployer(PodmanConfig config, @Reference PodmanHost host, @Reference EgressGuard guard) {
        this.services = new ContainerServices(host.service(), settings(config), guard);
    }

    static ContainerServices.Settings settings(PodmanConfig config) {
        return new ContainerServices.Settings(
                config.user(),
                config.serviceMemoryBytes(),
                config.serviceCpus(),
                config.servicePids(),
                config.servicePort(),
                config.serviceNetwork(),
                Duration.ofSeconds(Math.max(1, config.serviceStartTimeoutSeconds())),
                Duration.ofMillis(Math.max(0, config.serviceDrainGraceMillis())),
                config.serviceLogLines(),
                config.serviceRegistry().strip(),
                config.serviceRegistryTls());
    }

    @Deactivate
    void deactivate() {
        services.close();
    }

    @Override
    public void validate(Deployment deployment) throws DeploymentException {
        services.validate(deployment);
    }

    @Override
    public void apply(List<Deployment> deployments) throws DeploymentException {
        services.apply(deployments);
    }

    @Override
    public Optional<URI> endpoint(String deploymentId) {
        return services.endpoint(deploymentId);
    }

    @Override
    public Health health() {
        return services.health();
    }

    @Override
    public String name() {
        return "services.podman";
    }

    @Override
    public String detail() {
        return services.health().detail();
    }

    @Override
    public List<LogLine> logs(String serviceId, long afterSeq, int limit) {
        return services.logs(serviceId, afterSeq, limit);
    }

    @Override
    public AutoCloseable follow(String serviceId, Consumer<LogLine> sink) {
        return services.follow(serviceId, sink);
    }
}
