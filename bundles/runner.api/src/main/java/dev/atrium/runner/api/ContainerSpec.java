package dev.atrium.runner.api;

import java.nio.file.Path;
import java.util.Map;

/**
 * What a job's container is.
 *
 * @param label the job's {@code runs-on} label, one of {@link JobRunner#labels()}
 * @param workspace a directory on this machine, mounted read-write at {@link #WORKSPACE}; the only mount
 * @param env environment of every command run in the container
 * @param memoryBytes the container's memory limit (0: the runner's default)
 * @param cpus the CPUs the container may use, e.g. 1.5 (0: the runner's default)
 * @param pids the most processes the container may have (0: the runner's default)
 * @param labels names the container carries for operators and for clean-up (e.g. {@code atrium.job=<id>})
 */
public record ContainerSpec(
        String label,
        Path workspace,
        Map<String, String> env,
        long memoryBytes,
        double cpus,
        int pids,
        Map<String, String> labels) {

    /** Where the workspace is mounted in the container, and the default working directory of commands. */
    public static final String WORKSPACE = "/workspace";

    public ContainerSpec {
        env = Map.copyOf(env);
        labels = Map.copyOf(labels);
    }
}
