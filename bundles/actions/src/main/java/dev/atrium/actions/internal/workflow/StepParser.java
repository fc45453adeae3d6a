package dev.atrium.actions.internal.workflow;

import dev.atrium.actions.internal.workflow.YamlReader.Entry;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.yaml.snakeyaml.nodes.Node;

/** {@code jobs.<id>.steps[*]}: run steps and the built-in actions, their {@code with} checked. */
final class StepParser {

    static final Set<String> KEYS = Set.of(
            "id",
            "name",
            "if",
            "run",
            "uses",
            "with",
            "env",
            "shell",
            "working-directory",
            "continue-on-error",
            "timeout-minutes");

    private static final Set<String> SHELLS = Set.of("bash", "sh", "pwsh", "python");

    private final YamlReader yaml;

    StepParser(YamlReader yaml) {
        this.yaml = yaml;
    }

    /** A shell name Atrium's runners have, or a command template with {0} where the script's path goes. */
    String shell(Node node, String path) throws WorkflowException {
        String shell = yaml.literal(node, path);
        if (!SHELLS.contains(shell) && !shell.contains("{0}")) {
            throw yaml.error(
                    node,
                    "unsupported shell '" + shell + "' in '" + path
                            + "' (bash, sh, pwsh, python, or a command with {0} for the script)");
        }
        return shell;
    }

    Step parse(Node node, String path, Set<String> ids) throws WorkflowException {
        Map<String, Entry> e = yaml.entries(node, path, KEYS, Map.of());
        String id = null;
        if (e.containsKey("id")) {
            Entry idEntry = e.get("id");
            id = yaml.literal(idEntry.value(), path + ".id");
            if (!YamlReader.IDENTIFIER.matcher(id).matches()) {
                throw yaml.error(
                        idEntry.value(),
                        "step id '" + id + "' must start with a letter or '_' and hold only letters, digits, '-', '_'");
            }
            if (!ids.add(id.toLowerCase(java.util.Locale.ROOT))) {
                throw yaml.error(idEntry.value(), "duplicate step id '" + id + "'");
            }
        }
        String name = e.containsKey("name") ? yaml.string(e.get("name").value(), path + ".name") : null;
        String ifExpression = e.containsKey("if") ? condition(e.get("if").value(), path + ".if") : null;
        boolean hasRun = e.containsKey("run");
        boolean hasUses = e.containsKey("uses");
        if (hasRun == hasUses) {
            throw yaml.error(node, "step '" + path + "' needs exactly one of 'run' and 'uses'");
        }
        String run = null;
        Uses uses = null;
        Map<String, String> with = Map.of();
        if (hasRun) {
            run = yaml.string(e.get("run").value(), path + ".run");
            if (run.isBlank()) {
                throw yaml.error(e.get("run").value(), "'" + path + ".run' is empty");
            }
            if (e.containsKey("with")) {
                throw yaml.error(e.get("with").keyNode(), "'" + path + ".with' is only for a 'uses' step");
            }
        } else {
            Entry u = e.get("uses");
            String text = yaml.literal(u.value(), path + ".uses");
            uses = Uses.of(text);
            if (uses == null) {
                throw yaml.error(
                        u.value(),
                        "unsupported action '" + text + "' in '" + path + ".uses' (built-ins: "
                                + Arrays.stream(Uses.values()).map(Uses::action).collect(Collectors.joining(", "))
                                + ", at any version)");
            }
            for (String k : List.of("shell", "working-directory")) {
                if (e.containsKey(k)) {
                    throw yaml.error(e.get(k).keyNode(), "'" + path + "." + k + "' is only for a 'run' step");
                }
            }
            with = with(uses, e.get("with"), node, path);
        }
        Map<String, String> env = e.containsKey("env") ? yaml.env(e.get("env").value(), path + ".env") : Map.of();
        String shell = e.containsKey("shell") ? shell(e.get("shell").value(), path + ".shell") : null;
        String workingDirectory = e.containsKey("working-directory")
                ? yaml.string(e.get("working-directory").value(), path + ".working-directory")
                : null;
        boolean continueOnError = e.containsKey("continue-on-error")
                && yaml.bool(e.get("continue-on-error").value(), path + ".continue-on-error");
        double timeout = e.containsKey("timeout-minutes")
                ? yaml.minutes(e.get("timeout-minutes").value(), path + ".timeout-minutes", 0.01, 10080)
                : 0;
        return new Step(
                id,
                name,
                ifExpression,
                run,
                uses,
                with,
                env,
                shell,
                workingDirectory,
                continueOnError,
                timeout,
                YamlReader.line(node));
    }

    /** An {@code if}: with or without {@code ${{ }}}; it must parse, its functions known. */
    String condition(Node node, String path) throws WorkflowException {
        String value = rawCondition(node, path);
        try {
            Expressions.condition(value);
        } catch (ExpressionException ex) {
            throw yaml.expressionError(node, path, value, ex);
        }
        return value;
    }

    private String rawCondition(Node node, String path) throws WorkflowException {
        if (!(node instanceof org.yaml.snakeyaml.nodes.ScalarNode s) || YamlReader.isNull(node)) {
            throw yaml.error(node, "'" + path + "' must be a string");
        }
        return s.getValue();
    }

    private Map<String, String> with(Uses uses, Entry entry, Node step, String path) throws WorkflowException {
        Map<String, String> with = new LinkedHashMap<>();
        Map<String, Node> nodes = new LinkedHashMap<>();
        if (entry != null && !YamlReader.isNull(entry.value())) {
            for (Entry w :
                    yaml.entries(entry.value(), path + ".with", null, Map.of()).values()) {
                String key = path + ".with." + w.key();
                if (!uses.withKeys().contains(w.key())) {
                    throw yaml.error(
                            w.keyNode(),
                            "unsupported key '" + key + "' for " + uses.action() + " (supported: "
                                    + uses.withKeys().stream().sorted().collect(Collectors.joining(", ")) + ")");
                }
                with.put(w.key(), YamlReader.isNull(w.value()) ? "" : yaml.string(w.value(), key));
                nodes.put(w.key(), w.value());
            }
        }
        for (String required : required(uses)) {
            if (!with.containsKey(required) || with.get(required).isBlank()) {
                throw yaml.error(
                        entry == null ? step : entry.keyNode(),
                        uses.action() + " needs 'with." + required + "' in '" + path + "'");
            }
        }
        for (Map.Entry<String, String> w : with.entrySet()) {
            String value = w.getValue();
            if (value.contains("${{")) {
                continue; // known only when the step runs
            }
            Node at = nodes.get(w.getKey());
            String key = path + ".with." + w.getKey();
            switch (w.getKey()) {
                case "fetch-depth" -> yaml.integer(at, key, 0, Integer.MAX_VALUE);
                case "retention-days" -> yaml.integer(at, key, 1, 90);
                case "clean", "persist-credentials", "overwrite", "merge-multiple" -> yaml.bool(at, key);
                case "if-no-files-found" -> {
                    if (!Set.of("warn", "error", "ignore").contains(value)) {
                        throw yaml.error(at, "'" + key + "' must be warn, error or ignore");
                    }
                }
                default -> {
                    // free text: names, paths, refs, keys
                }
            }
        }
        return with;
    }

    private static List<String> required(Uses uses) {
        return switch (uses) {
            case UPLOAD_ARTIFACT -> List.of("path");
            case CACHE -> List.of("key", "path");
            default -> List.of();
        };
    }
}
