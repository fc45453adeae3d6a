package dev.atrium.runner.api;

import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/** Runs jobs in fresh containers, one per job. */
@ProviderType
public interface JobRunner {

    /** The service property naming the runner ({@code podman}). */
    String NAME = "atrium.runner";

    /** The runner's name, as {@link #NAME} has it. */
    String name();

    /**
     * Whether jobs can start now, and if not why ("podman not found on PATH", "the podman service stopped: …"). Cheap:
     * asked before every start and by {@code /healthz}.
     */
    Availability availability();

    /** The {@code runs-on} labels this runner has an image for (e.g. {@code busybox}, {@code ubuntu-latest}). */
    Set<String> labels();

    /**
     * Creates and starts a container for one job. The container's only mount is {@code spec.workspace()} at
     * {@link ContainerSpec#WORKSPACE}; it runs until {@link JobContainer#close()}.
     *
     * @throws RunnerException when the runner is unavailable, the label has no image, or the container does not start
     */
    JobContainer start(ContainerSpec spec) throws RunnerException;

    /**
     * @param ready whether {@link #start} can be expected to work
     * @param reason why not, or a short description of what runs (e.g. "podman 4.3.1, runc")
     */
    record Availability(boolean ready, String reason) {}
}
