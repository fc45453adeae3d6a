package dev.atrium.services.api;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SpaceRef;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Services as another capability manages them (the app platform deploys whole apps through it): the same desired
 * state, checks and rollout the {@code /api/services} routes use, without HTTP. Each change is applied to the
 * providers and the routing table before the call returns, as for the routes.
 *
 * <p>It does not decide who owns a workspace: {@code space} is what the kernel's {@code OwnerScope} proved for the
 * caller, and a service id passed in must be one the caller's bundle found through {@link #service} in a workspace it
 * proved. Failures are {@link Refused}, with the status and error code the routes would answer.
 *
 * @since 1.2
 */
@ProviderType
public interface ServiceControl {

    /** A service: {@code status} is created, deployed or canary; {@code hostname} is {@code <slug>.<appsDomain>}. */
    record ServiceInfo(
            String id,
            String spaceId,
            String name,
            String slug,
            String hostname,
            String status,
            String currentDeploymentId,
            String canaryDeploymentId,
            Integer canaryPercent) {}

    /** A deployment of a service: {@code status} as the deployment routes give it (active, canary, superseded, …). */
    record DeploymentInfo(
            String id, String serviceId, String status, String provider, String artifactKind, Instant createdAt) {}

    /** A local env variable of a service. */
    record EnvVar(String value, boolean secret) {}

    /** A change the services capability refused: the HTTP status and error code the routes would answer. */
    final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int status;
        private final String code;

        public Refused(int status, String code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }

        public int status() {
            return status;
        }

        public String code() {
            return code;
        }
    }

    Optional<ServiceInfo> service(String serviceId);

    /** The service of {@code spaceId} with that name, if any. */
    Optional<ServiceInfo> byName(String spaceId, String name);

    /**
     * Creates a service named {@code name} in {@code space}; its slug is derived from {@code slugHint} (or the name)
     * and made unique.
     */
    ServiceInfo create(Caller caller, SpaceRef space, String name, String slugHint);

    /** Makes {@code env} exactly the service's local env variables. */
    void replaceEnv(Caller caller, String serviceId, Map<String, EnvVar> env);

    /**
     * Makes {@code bindings} (binding name to resource id) exactly the service's resource bindings; each resource is
     * checked as {@code PATCH /api/services/:id/bindings} checks it.
     */
    void replaceBindings(Caller caller, SpaceRef space, String serviceId, Map<String, String> bindings);

    /**
     * Deploys an artifact as {@code POST /api/services/:id/deployments} does: validated by its provider, stored, and
     * running (direct) or running beside the current one with {@code canaryPercent} of the requests (canary; a service
     * without a current deployment deploys directly).
     *
     * @param strategy      {@code direct} or {@code canary}
     * @param canaryPercent 1–99, or null for the configured default
     */
    DeploymentInfo deploy(
            String serviceId,
            byte[] artifact,
            String artifactKind,
            String provider,
            String message,
            String strategy,
            Integer canaryPercent);

    /** Sets the share of requests the service's canary gets (1–99). */
    void setCanaryPercent(String serviceId, int percent);

    /** Ends the service's canary: promoted (it becomes current) or aborted (the current one takes all requests). */
    void endCanary(String serviceId, boolean promote);

    /** Makes an earlier deployment of the service current again, as the rollback route does. */
    DeploymentInfo rollback(String serviceId, String deploymentId);

    /** The service's deployments, newest first. */
    List<DeploymentInfo> deployments(String serviceId);

    /**
     * Sets the runtime settings an app declares, as {@code PATCH /api/services/:id/settings} does: the compatibility
     * date ({@code YYYY-MM-DD}, null for the default) and the limits ({@code cpu_ms}, {@code memory_mb}; null or empty
     * for the defaults). The service's other settings are kept; unchanged settings change nothing.
     *
     * @since 1.4
     */
    void setSettings(Caller caller, String serviceId, String compatibilityDate, Map<String, Long> limits);

    /**
     * Makes {@code routes} (path prefix to service id) exactly the path routes of the service's hostnames: a request to
     * its slug's hostname or one of its verified custom domains whose path starts with a prefix goes to that prefix's
     * service (the longest prefix wins; a prefix matches whole path segments, {@code /api} matches {@code /api} and
     * {@code /api/x}, not {@code /apix}); other paths go to the service itself. Targets are services of the same
     * workspace (the service itself allowed); an empty map removes them. Unchanged routes change nothing.
     *
     * @since 1.4
     */
    void setPathRoutes(Caller caller, String serviceId, Map<String, String> routes);

    /** Deletes a service, its deployments and bindings; whether it was there. */
    boolean delete(String serviceId);
}
