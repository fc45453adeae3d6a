package dev.atrium.actions.internal.workflow;

import dev.atrium.actions.internal.workflow.Triggers.Filter;
import dev.atrium.actions.internal.workflow.YamlReader.Entry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/** {@code on}: as a string, a list or a mapping of the supported events and their filters. */
final class TriggerParser {

    static final List<String> EVENTS = List.of("push", "pull_request", "workflow_dispatch", "schedule");
    private static final Set<String> INPUT_TYPES = Set.of("string", "boolean", "choice", "number", "environment");

    private final YamlReader yaml;

    TriggerParser(YamlReader yaml) {
        this.yaml = yaml;
    }

    Triggers parse(Node on) throws WorkflowException {
        Map<String, Node> events = new LinkedHashMap<>(); // event → its configuration, null when none
        Map<String, Node> at = new LinkedHashMap<>(); // event → the node naming it
        if (YamlReader.isNull(on)) {
            throw yaml.error(on, "'on' names no event");
        }
        if (on instanceof ScalarNode) {
            String event = yaml.literal(on, "on");
            events.put(event, null);
            at.put(event, on);
        } else if (on instanceof SequenceNode seq) {
            int i = 0;
            for (Node item : seq.getValue()) {
                String event = yaml.literal(item, "on[" + i++ + "]");
                if (events.containsKey(event)) {
                    throw yaml.error(item, "duplicate event '" + event + "' in 'on'");
                }
                events.put(event, null);
                at.put(event, item);
            }
        } else if (on instanceof MappingNode) {
            for (Entry e : yaml.entries(on, "on", null, Map.of()).values()) {
                events.put(e.key(), YamlReader.isNull(e.value()) ? null : e.value());
                at.put(e.key(), e.keyNode());
            }
        } else {
            throw yaml.error(on, "'on' must be an event, a list of events or a mapping of events");
        }
        if (events.isEmpty()) {
            throw yaml.error(on, "'on' names no event");
        }
        Triggers.Push push = null;
        Triggers.PullRequest pullRequest = null;
        Map<String, Input> inputs = null;
        List<Schedule> schedules = List.of();
        for (Map.Entry<String, Node> e : events.entrySet()) {
            Node config = e.getValue();
            switch (e.getKey()) {
                case "push" -> push = push(config);
                case "pull_request" -> pullRequest = pullRequest(config);
                case "workflow_dispatch" -> inputs = dispatch(config);
                case "schedule" -> {
                    if (config == null) {
                        throw yaml.error(at.get("schedule"), "'on.schedule' needs a list of '- cron: ...' entries");
                    }
                    schedules = schedules(config);
                }
                default ->
                    throw yaml.error(
                            at.get(e.getKey()),
                            "unsupported event '" + e.getKey() + "' (supported: " + String.join(", ", EVENTS) + ")");
            }
        }
        return new Triggers(push, pullRequest, inputs, schedules);
    }

    private Triggers.Push push(Node config) throws WorkflowException {
        if (config == null) {
            return new Triggers.Push(Filter.NONE, Filter.NONE, Filter.NONE);
        }
        Map<String, Entry> e = yaml.entries(
                config,
                "on.push",
                Set.of("branches", "branches-ignore", "tags", "tags-ignore", "paths", "paths-ignore"),
                Map.of());
        return new Triggers.Push(
                filter(e, "on.push", "branches"), filter(e, "on.push", "tags"), filter(e, "on.push", "paths"));
    }

    private Triggers.PullRequest pullRequest(Node config) throws WorkflowException {
        if (config == null) {
            return new Triggers.PullRequest(Triggers.DEFAULT_PULL_REQUEST_TYPES, Filter.NONE, Filter.NONE);
        }
        Map<String, Entry> e = yaml.entries(
                config,
                "on.pull_request",
                Set.of("branches", "branches-ignore", "paths", "paths-ignore", "types"),
                Map.of("tags", "pull requests have no tags", "tags-ignore", "pull requests have no tags"));
        List<String> types = Triggers.DEFAULT_PULL_REQUEST_TYPES;
        if (e.containsKey("types")) {
            Entry t = e.get("types");
            types = yaml.strings(t.value(), "on.pull_request.types");
            for (String type : types) {
                if (!Triggers.PULL_REQUEST_TYPES.contains(type)) {
                    throw yaml.error(
                            t.value(),
                            "unsupported pull_request type '" + type + "' (supported: "
                                    + String.join(
                                            ", ",
                                            Triggers.PULL_REQUEST_TYPES.stream()
                                                    .sorted()
                                                    .toList()) + ")");
                }
            }
        }
        return new Triggers.PullRequest(
                types, filter(e, "on.pull_request", "branches"), filter(e, "on.pull_request", "paths"));
    }

    /** {@code <name>} or {@code <name>-ignore}; both at once is refused, as GitHub does. */
    private Filter filter(Map<String, Entry> entries, String path, String name) throws WorkflowException {
        Entry include = entries.get(name);
        Entry ignore = entries.get(name + "-ignore");
        if (include != null && ignore != null) {
            throw yaml.error(
                    ignore.keyNode(),
                    "'" + path + "." + name + "' and '" + path + "." + name + "-ignore' cannot both be set");
        }
        if (include == null && ignore == null) {
            return Filter.NONE;
        }
        Entry set = include != null ? include : ignore;
        String key = path + "." + set.key();
        List<String> patterns = new ArrayList<>();
        for (String p : yaml.strings(set.value(), key)) {
            if (p.contains("${{")) {
                throw yaml.error(set.value(), "'" + key + "' cannot hold an expression");
            }
            patterns.add(p);
        }
        Glob glob;
        try {
            glob = Glob.of(patterns);
        } catch (IllegalArgumentException ex) {
            throw yaml.error(set.value(), "'" + key + "': " + ex.getMessage());
        }
        return include != null ? new Filter(glob, null) : new Filter(null, glob);
    }

    private Map<String, Input> dispatch(Node config) throws WorkflowException {
        if (config == null) {
            return Map.of();
        }
        Map<String, Entry> e = yaml.entries(config, "on.workflow_dispatch", Set.of("inputs"), Map.of());
        Entry inputsEntry = e.get("inputs");
        if (inputsEntry == null || YamlReader.isNull(inputsEntry.value())) {
            return Map.of();
        }
        Map<String, Input> inputs = new LinkedHashMap<>();
        String base = "on.workflow_dispatch.inputs";
        for (Entry in : yaml.entries(inputsEntry.value(), base, null, Map.of()).values()) {
            String path = base + "." + in.key();
            if (!YamlReader.IDENTIFIER.matcher(in.key()).matches()) {
                throw yaml.error(in.keyNode(), "'" + path + "' is not a valid input name");
            }
            inputs.put(in.key(), input(in.value(), path));
        }
        return inputs;
    }

    private Input input(Node node, String path) throws WorkflowException {
        if (YamlReader.isNull(node)) {
            return new Input("", false, null, "string", List.of());
        }
        Map<String, Entry> e = yaml.entries(
                node,
                path,
                Set.of("description", "required", "default", "type", "options"),
                Map.of("deprecationMessage", ""));
        String description =
                e.containsKey("description") ? yaml.literal(e.get("description").value(), path + ".description") : "";
        boolean required =
                e.containsKey("required") && yaml.bool(e.get("required").value(), path + ".required");
        String type = e.containsKey("type") ? yaml.literal(e.get("type").value(), path + ".type") : "string";
        if (!INPUT_TYPES.contains(type)) {
            throw yaml.error(
                    e.get("type").value(),
                    "'" + path + ".type' must be one of string, boolean, choice, number, environment");
        }
        List<String> options = List.of();
        if (e.containsKey("options")) {
            if (!type.equals("choice")) {
                throw yaml.error(e.get("options").keyNode(), "'" + path + ".options' is only for type choice");
            }
            options = new ArrayList<>();
            int i = 0;
            for (Node o :
                    yaml.sequence(e.get("options").value(), path + ".options").getValue()) {
                options.add(yaml.literal(o, path + ".options[" + i++ + "]"));
            }
        } else if (type.equals("choice")) {
            throw yaml.error(node, "'" + path + "' is a choice without 'options'");
        }
        String defaultValue = null;
        Input input = new Input(description, required, null, type, options);
        if (e.containsKey("default")) {
            Node d = e.get("default").value();
            defaultValue = yaml.literal(d, path + ".default");
            try {
                Triggers.checkInput(path.substring(path.lastIndexOf('.') + 1), input, defaultValue);
            } catch (IllegalArgumentException ex) {
                throw yaml.error(d, "'" + path + ".default': " + ex.getMessage());
            }
        }
        return new Input(description, required, defaultValue, type, options);
    }

    private List<Schedule> schedules(Node config) throws WorkflowException {
        List<Schedule> out = new ArrayList<>();
        int i = 0;
        for (Node item : yaml.sequence(config, "on.schedule").getValue()) {
            String path = "on.schedule[" + i++ + "]";
            Map<String, Entry> e = yaml.entries(item, path, Set.of("cron"), Map.of());
            Entry cron = e.get("cron");
            if (cron == null) {
                throw yaml.error(item, "'" + path + "' needs 'cron'");
            }
            try {
                out.add(Schedule.of(yaml.literal(cron.value(), path + ".cron")));
            } catch (IllegalArgumentException ex) {
                throw yaml.error(cron.value(), ex.getMessage());
            }
        }
        if (out.isEmpty()) {
            throw yaml.error(config, "'on.schedule' needs at least one '- cron: ...' entry");
        }
        return out;
    }
}
