package dev.atrium.actions.internal.workflow;

import dev.atrium.actions.internal.workflow.YamlReader.Entry;
import java.io.StringReader;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/** Reads a workflow file through SnakeYAML's node API (for line numbers) into a {@link Workflow}. */
final class WorkflowParser {

    static final Set<String> KEYS = Set.of("name", "on", "env", "defaults", "concurrency", "jobs");

    static final Map<String, String> UNSUPPORTED = Map.of(
            "run-name", "runs are named by their commit or trigger",
            "permissions", "Atrium's job token has fixed permissions");

    /** A workflow file larger than this is refused before parsing. */
    static final int MAX_CHARS = 1 << 20;

    private final String path;
    private final Set<String> runnerLabels;
    private final YamlReader yaml;

    WorkflowParser(String path, Set<String> runnerLabels) {
        this.path = path;
        this.runnerLabels = Set.copyOf(runnerLabels);
        this.yaml = new YamlReader(path);
    }

    Workflow parse(String text) throws WorkflowException {
        if (text.length() > MAX_CHARS) {
            throw new WorkflowException(path, 0, 0, "the file is larger than " + MAX_CHARS + " characters");
        }
        Node root = compose(text);
        if (root == null) {
            throw new WorkflowException(path, 0, 0, "the file is empty");
        }
        Map<String, Entry> e = yaml.entries(root, "", KEYS, UNSUPPORTED);
        if (!e.containsKey("on")) {
            throw yaml.error(root, "the workflow needs 'on'");
        }
        if (!e.containsKey("jobs")) {
            throw yaml.error(root, "the workflow needs 'jobs'");
        }
        String name = e.containsKey("name") ? yaml.literal(e.get("name").value(), "name") : path;
        Triggers on = new TriggerParser(yaml).parse(e.get("on").value());
        Map<String, String> env = e.containsKey("env") ? yaml.env(e.get("env").value(), "env") : Map.of();
        JobParser jobParser = new JobParser(yaml, runnerLabels);
        Defaults defaults =
                e.containsKey("defaults") ? jobParser.defaults(e.get("defaults").value(), "defaults") : Defaults.NONE;
        Concurrency concurrency = e.containsKey("concurrency")
                ? jobParser.concurrency(e.get("concurrency").value(), "concurrency")
                : null;
        Map<String, Job> jobs = new LinkedHashMap<>();
        Map<String, Node> needsAt = new LinkedHashMap<>();
        Node jobsNode = e.get("jobs").value();
        for (Entry j : yaml.entries(jobsNode, "jobs", null, Map.of()).values()) {
            jobs.put(j.key(), jobParser.parse(j.key(), j.keyNode(), j.value(), needsAt));
        }
        if (jobs.isEmpty()) {
            throw yaml.error(jobsNode, "'jobs' has no job");
        }
        checkNeeds(jobs, needsAt);
        return new Workflow(path, name, on, env, defaults, concurrency, jobs);
    }

    private Node compose(String text) throws WorkflowException {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(50);
        options.setCodePointLimit(MAX_CHARS * 2);
        try {
            return new Yaml(new SafeConstructor(options)).compose(new StringReader(text));
        } catch (MarkedYAMLException ex) {
            Mark mark = ex.getProblemMark() != null ? ex.getProblemMark() : ex.getContextMark();
            String problem = ex.getProblem() != null ? ex.getProblem() : ex.getMessage();
            if (mark == null) {
                throw new WorkflowException(path, 0, 0, "invalid YAML: " + problem);
            }
            throw new WorkflowException(
                    path, mark.getLine() + 1, mark.getColumn() + 1, "invalid YAML: " + problem.strip());
        } catch (YAMLException ex) {
            throw new WorkflowException(path, 0, 0, "invalid YAML: " + ex.getMessage());
        }
    }

    private void checkNeeds(Map<String, Job> jobs, Map<String, Node> needsAt) throws WorkflowException {
        for (Job job : jobs.values()) {
            for (String need : job.needs()) {
                if (!jobs.containsKey(need)) {
                    throw yaml.error(
                            needsAt.get(job.id()),
                            "job '" + job.id() + "' needs unknown job '" + need + "' (jobs: "
                                    + String.join(", ", jobs.keySet()) + ")");
                }
            }
        }
        Optional<List<String>> cycle = Dag.cycle(Dag.needs(jobs));
        if (cycle.isPresent()) {
            throw yaml.error(
                    needsAt.get(cycle.get().get(0)),
                    "the needs of jobs form a cycle: " + String.join(" -> ", cycle.get()));
        }
    }
}
