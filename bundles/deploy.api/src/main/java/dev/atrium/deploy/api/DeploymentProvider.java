package dev.atrium.deploy.api;

import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Runs deployments of one or more artifact kinds. Calls may come from several threads; {@link #apply} calls are
 * serialised by the caller.
 */
@ConsumerType
public interface DeploymentProvider {

    /** Service property: the provider's name as a deployment's {@code provider.name} gives it, e.g. {@code workerd}. */
    String NAME = "atrium.deploy.provider";

    /** Service property: the artifact kinds run, e.g. {@code worker-bundle} or {@code container-image}. */
    String KIND = "atrium.deploy.kind";

    /**
     * Checks an artifact before it is stored, e.g. that a worker module compiles. Must not disturb what runs.
     *
     * @throws DeploymentException {@link DeploymentException.Kind#INVALID} with a message the client sees (e.g. the
     *         compiler's error text) when the artifact cannot run
     */
    void validate(Deployment deployment) throws DeploymentException;

    /**
     * Makes {@code deployments} exactly what this provider runs: starts the new ones, keeps the unchanged ones, stops
     * the rest. Returns once every listed deployment answers at its {@link #endpoint}; requests already sent to a
     * deployment that is stopped by this call are allowed to finish (drained), not cut.
     *
     * @throws DeploymentException when the new state cannot be started; what ran before keeps running then
     */
    void apply(List<Deployment> deployments) throws DeploymentException;

    /** Where a running deployment takes HTTP requests now (an {@code http://127.0.0.1:port} base), or empty. */
    Optional<URI> endpoint(String deploymentId);

    /** Whether the runtime is up, with a short reason. Cheap. */
    Health health();

    /**
     * Log lines a service's deployments wrote, oldest first, with a sequence number greater than {@code afterSeq}.
     *
     * @param limit at most this many lines
     */
    List<LogLine> logs(String serviceId, long afterSeq, int limit);

    /**
     * Follows a service's new log lines as they are written until the returned handle is closed. {@code sink} is
     * called on the provider's threads and must not block.
     */
    AutoCloseable follow(String serviceId, Consumer<LogLine> sink);

    /** A health report; {@code detail} is short and never a secret. */
    record Health(boolean healthy, String detail) {}
}
