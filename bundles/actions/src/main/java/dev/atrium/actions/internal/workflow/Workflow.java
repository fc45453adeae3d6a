package dev.atrium.actions.internal.workflow;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A workflow file parsed and validated.
 *
 * @param path the file's path in the repository, e.g. {@code .github/workflows/ci.yml}
 * @param name the {@code name}, or the path when it has none
 * @param concurrency null when the workflow has none
 * @param jobs in file order
 */
public record Workflow(
        String path,
        String name,
        Triggers on,
        Map<String, String> env,
        Defaults defaults,
        Concurrency concurrency,
        Map<String, Job> jobs) {

    /** A runner label set holding this accepts any {@code runs-on} (a check of everything but the labels). */
    public static final String ANY_LABEL = "*";

    /** The directories workflow files are read from, in the order they are looked for. */
    public static final List<String> DIRECTORIES =
            List.of(".github/workflows/", ".gitea/workflows/", ".atrium/workflows/");

    public Workflow {
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        jobs = Collections.unmodifiableMap(new LinkedHashMap<>(jobs));
    }

    /**
     * Parses and validates a workflow file.
     *
     * @param runnerLabels the labels of the runners there are; {@code runs-on} must name one of them
     * @throws WorkflowException for anything that cannot run or is not supported, with its line
     */
    public static Workflow parse(String path, String yaml, Set<String> runnerLabels) throws WorkflowException {
        return new WorkflowParser(path, runnerLabels).parse(yaml);
    }

    /** Whether a repository path is a workflow file: {@code *.yml} or {@code *.yaml} directly in a workflow dir. */
    public static boolean isWorkflowFile(String repositoryPath) {
        for (String dir : DIRECTORIES) {
            if (repositoryPath.startsWith(dir)) {
                String rest = repositoryPath.substring(dir.length());
                return !rest.contains("/") && (rest.endsWith(".yml") || rest.endsWith(".yaml"));
            }
        }
        return false;
    }

    /** The jobs in an order where each comes after all it needs. */
    public List<Job> jobOrder() {
        return Dag.order(Dag.needs(jobs)).stream().map(jobs::get).toList();
    }
}
