package dev.atrium.actions.internal.workflow;

import dev.atrium.actions.internal.workflow.YamlReader.Entry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/** {@code jobs.<id>}: a job's keys, its strategy and matrix, its runner label; steps go to {@link StepParser}. */
final class JobParser {

    static final Set<String> KEYS = Set.of(
            "name",
            "runs-on",
            "needs",
            "if",
            "env",
            "defaults",
            "timeout-minutes",
            "strategy",
            "outputs",
            "steps",
            "continue-on-error");

    static final Map<String, String> UNSUPPORTED = Map.of(
            "permissions", "Atrium's job token has fixed permissions",
            "environment", "Atrium has no deployment environments",
            "container", "the runner chooses the job's container by its label",
            "services", "service containers are not supported",
            "concurrency", "a job's own concurrency group is not supported: set concurrency on the workflow",
            "uses", "reusable workflows are not supported",
            "with", "reusable workflows are not supported",
            "secrets", "reusable workflows are not supported");

    private final YamlReader yaml;
    private final StepParser steps;
    private final Set<String> runnerLabels;

    JobParser(YamlReader yaml, Set<String> runnerLabels) {
        this.yaml = yaml;
        this.steps = new StepParser(yaml);
        this.runnerLabels = runnerLabels;
    }

    /** The job; {@code needsAt} receives the node of its {@code needs} for the line of a later refusal. */
    Job parse(String id, Node idNode, Node node, Map<String, Node> needsAt) throws WorkflowException {
        String path = "jobs." + id;
        if (!YamlReader.IDENTIFIER.matcher(id).matches()) {
            throw yaml.error(
                    idNode,
                    "job id '" + id + "' must start with a letter or '_' and hold only letters, digits, '-', '_'");
        }
        Map<String, Entry> e = yaml.entries(node, path, KEYS, UNSUPPORTED);
        String name = e.containsKey("name") ? yaml.string(e.get("name").value(), path + ".name") : null;
        List<String> needs = List.of();
        if (e.containsKey("needs")) {
            Node n = e.get("needs").value();
            needs = new ArrayList<>();
            for (String need : yaml.strings(n, path + ".needs")) {
                if (need.contains("${{")) {
                    throw yaml.error(n, "'" + path + ".needs' cannot hold an expression");
                }
                if (needs.contains(need)) {
                    throw yaml.error(n, "'" + path + ".needs' names '" + need + "' twice");
                }
                needs.add(need);
            }
            needsAt.put(id, n);
        }
        String ifExpression = e.containsKey("if") ? steps.condition(e.get("if").value(), path + ".if") : null;
        Map<String, String> env = e.containsKey("env") ? yaml.env(e.get("env").value(), path + ".env") : Map.of();
        Defaults defaults =
                e.containsKey("defaults") ? defaults(e.get("defaults").value(), path + ".defaults") : Defaults.NONE;
        double timeout = e.containsKey("timeout-minutes")
                ? yaml.minutes(e.get("timeout-minutes").value(), path + ".timeout-minutes", 0.01, 10080)
                : Job.DEFAULT_TIMEOUT_MINUTES;
        Strategy strategy =
                e.containsKey("strategy") ? strategy(e.get("strategy").value(), path + ".strategy") : null;
        Concurrency concurrency =
                e.containsKey("concurrency") ? concurrency(e.get("concurrency").value(), path + ".concurrency") : null;
        Map<String, String> outputs = new LinkedHashMap<>();
        if (e.containsKey("outputs")) {
            for (Entry o : yaml.entries(e.get("outputs").value(), path + ".outputs", null, Map.of())
                    .values()) {
                if (!YamlReader.IDENTIFIER.matcher(o.key()).matches()) {
                    throw yaml.error(o.keyNode(), "'" + path + ".outputs." + o.key() + "' is not a valid output name");
                }
                outputs.put(o.key(), yaml.string(o.value(), path + ".outputs." + o.key()));
            }
        }
        boolean continueOnError = e.containsKey("continue-on-error")
                && yaml.bool(e.get("continue-on-error").value(), path + ".continue-on-error");
        if (!e.containsKey("runs-on")) {
            throw yaml.error(idNode, "job '" + id + "' needs 'runs-on'");
        }
        String runsOn = runsOn(e.get("runs-on").value(), path + ".runs-on", strategy);
        if (!e.containsKey("steps")) {
            throw yaml.error(idNode, "job '" + id + "' needs 'steps'");
        }
        List<Step> stepList = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        SequenceNode seq = yaml.sequence(e.get("steps").value(), path + ".steps");
        int i = 0;
        for (Node s : seq.getValue()) {
            stepList.add(steps.parse(s, path + ".steps[" + i++ + "]", ids));
        }
        if (stepList.isEmpty()) {
            throw yaml.error(seq, "job '" + id + "' has no steps");
        }
        return new Job(
                id,
                name,
                runsOn,
                needs,
                ifExpression,
                env,
                defaults,
                timeout,
                strategy,
                concurrency,
                outputs,
                stepList,
                continueOnError,
                YamlReader.line(idNode));
    }

    Defaults defaults(Node node, String path) throws WorkflowException {
        Map<String, Entry> e = yaml.entries(node, path, Set.of("run"), Map.of());
        if (!e.containsKey("run")) {
            return Defaults.NONE;
        }
        Map<String, Entry> run =
                yaml.entries(e.get("run").value(), path + ".run", Set.of("shell", "working-directory"), Map.of());
        String shell = run.containsKey("shell") ? steps.shell(run.get("shell").value(), path + ".run.shell") : null;
        String dir = run.containsKey("working-directory")
                ? yaml.literal(run.get("working-directory").value(), path + ".run.working-directory")
                : null;
        return new Defaults(shell, dir);
    }

    Concurrency concurrency(Node node, String path) throws WorkflowException {
        if (node instanceof ScalarNode) {
            return new Concurrency(yaml.string(node, path), false);
        }
        Map<String, Entry> e = yaml.entries(node, path, Set.of("group", "cancel-in-progress"), Map.of());
        if (!e.containsKey("group")) {
            throw yaml.error(node, "'" + path + "' needs 'group'");
        }
        String group = yaml.string(e.get("group").value(), path + ".group");
        boolean cancel = e.containsKey("cancel-in-progress")
                && yaml.bool(e.get("cancel-in-progress").value(), path + ".cancel-in-progress");
        return new Concurrency(group, cancel);
    }

    /**
     * One label, or a one-element list of it. An expression may read only the matrix: every combination's label
     * is checked here, so a job never waits for a runner that does not exist.
     */
    private String runsOn(Node node, String path, Strategy strategy) throws WorkflowException {
        Node labelNode = node;
        if (node instanceof SequenceNode seq) {
            if (seq.getValue().size() != 1) {
                throw yaml.error(node, "'" + path + "' must be one label; several labels are not supported");
            }
            labelNode = seq.getValue().get(0);
        } else if (node instanceof MappingNode) {
            throw yaml.error(node, "'" + path + "' must be one label; runner groups are not supported");
        }
        String label = yaml.string(labelNode, path).strip();
        if (!label.contains("${{")) {
            checkLabel(labelNode, path, label);
            return label;
        }
        Set<String> contexts = new HashSet<>();
        for (Expression x : Expressions.expressionsIn(label)) {
            contexts.addAll(x.contexts());
        }
        contexts.remove("matrix");
        if (!contexts.isEmpty()) {
            throw yaml.error(labelNode, "'" + path + "' may only read the matrix context, not " + contexts);
        }
        List<Map<String, Object>> combinations =
                strategy == null ? List.of(Map.of()) : strategy.matrix().expand();
        for (Map<String, Object> combination : combinations) {
            String resolved;
            try {
                resolved = Expressions.interpolate(label, Context.empty().with("matrix", combination))
                        .strip();
            } catch (IllegalArgumentException ex) {
                throw yaml.error(labelNode, "'" + path + "': " + ex.getMessage());
            }
            checkLabel(labelNode, path, resolved);
        }
        return label;
    }

    private void checkLabel(Node at, String path, String label) throws WorkflowException {
        if (runnerLabels.contains(Workflow.ANY_LABEL)) {
            return;
        }
        for (String known : runnerLabels) {
            if (known.equalsIgnoreCase(label)) {
                return;
            }
        }
        throw yaml.error(
                at,
                "unknown runner label '" + label + "' in '" + path + "' (known labels: "
                        + (runnerLabels.isEmpty() ? "none" : String.join(", ", new TreeSet<>(runnerLabels))) + ")");
    }

    private Strategy strategy(Node node, String path) throws WorkflowException {
        Map<String, Entry> e = yaml.entries(node, path, Set.of("matrix", "fail-fast", "max-parallel"), Map.of());
        if (!e.containsKey("matrix")) {
            throw yaml.error(node, "'" + path + "' needs 'matrix'");
        }
        Matrix matrix = matrix(e.get("matrix").value(), path + ".matrix");
        boolean failFast =
                !e.containsKey("fail-fast") || yaml.bool(e.get("fail-fast").value(), path + ".fail-fast");
        int maxParallel = e.containsKey("max-parallel")
                ? yaml.integer(e.get("max-parallel").value(), path + ".max-parallel", 1, Matrix.MAX_COMBINATIONS)
                : 0;
        return new Strategy(matrix, failFast, maxParallel);
    }

    private Matrix matrix(Node node, String path) throws WorkflowException {
        if (node instanceof ScalarNode s && s.getValue().contains("${{")) {
            throw yaml.error(node, "'" + path + "': a matrix computed by an expression is not supported");
        }
        Map<String, List<Object>> vectors = new LinkedHashMap<>();
        List<Map<String, Object>> include = List.of();
        List<Map<String, Object>> exclude = List.of();
        for (Entry e : yaml.entries(node, path, null, Map.of()).values()) {
            String key = path + "." + e.key();
            if (e.key().equals("include")) {
                include = entries(e.value(), key);
            } else if (e.key().equals("exclude")) {
                exclude = entries(e.value(), key);
            } else {
                if (!YamlReader.IDENTIFIER.matcher(e.key()).matches()) {
                    throw yaml.error(e.keyNode(), "'" + key + "' is not a valid matrix key");
                }
                if (!(e.value() instanceof SequenceNode)) {
                    throw yaml.error(e.value(), "'" + key + "' must be a list of values");
                }
                List<?> values = (List<?>) yaml.value(e.value(), key);
                if (values.isEmpty()) {
                    throw yaml.error(e.value(), "'" + key + "' has no values");
                }
                vectors.put(e.key(), new ArrayList<>(values));
            }
        }
        for (Map<String, Object> x : exclude) {
            for (String k : x.keySet()) {
                if (!vectors.containsKey(k)) {
                    throw yaml.error(node, "'" + path + ".exclude' names '" + k + "', which is not a matrix key");
                }
            }
        }
        Matrix matrix = new Matrix(vectors, include, exclude);
        long product = 1;
        for (List<Object> v : vectors.values()) {
            product = Math.min(product * v.size(), Integer.MAX_VALUE);
        }
        if (product > 100_000) { // refused before expanding it: excludes could not bring it under the limit sanely

            throw yaml.error(node, "'" + path + "' has more than " + Matrix.MAX_COMBINATIONS + " combinations");
        }
        int count = matrix.expand().size();
        if (count > Matrix.MAX_COMBINATIONS) {
            throw yaml.error(
                    node, "'" + path + "' has " + count + " combinations, more than " + Matrix.MAX_COMBINATIONS);
        }
        if (count == 0) {
            throw yaml.error(node, "'" + path + "' has no combinations");
        }
        return matrix;
    }

    @SuppressWarnings("unchecked") // value() of a mapping node is a Map<String, Object>
    private List<Map<String, Object>> entries(Node node, String path) throws WorkflowException {
        List<Map<String, Object>> out = new ArrayList<>();
        int i = 0;
        for (Node item : yaml.sequence(node, path).getValue()) {
            String p = path + "[" + i++ + "]";
            yaml.mapping(item, p);
            out.add((Map<String, Object>) yaml.value(item, p));
        }
        return out;
    }
}
