package dev.atrium.actions.internal.workflow;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The events that start a workflow ({@code on}): push, pull_request, workflow_dispatch, schedule, with their
 * filters evaluated GitHub's way.
 */
public final class Triggers {

    /** The pull request activity types Atrium emits; the default set is opened, synchronize, reopened. */
    public static final Set<String> PULL_REQUEST_TYPES = Set.of("opened", "synchronize", "reopened", "closed");

    static final List<String> DEFAULT_PULL_REQUEST_TYPES = List.of("opened", "synchronize", "reopened");

    /** A list and its -ignore counterpart (at most one is set); neither set passes everything. */
    record Filter(Glob include, Glob ignore) {
        static final Filter NONE = new Filter(null, null);

        boolean defined() {
            return include != null || ignore != null;
        }

        boolean matches(String name) {
            if (include != null) {
                return include.matches(name);
            }
            return ignore == null || !ignore.matches(name);
        }

        /** Paths: some changed file is included (paths), or some is not ignored (paths-ignore). Null: unknown. */
        boolean matchesAny(List<String> names) {
            if (!defined() || names == null) {
                return true;
            }
            return names.stream().anyMatch(this::matches);
        }
    }

    record Push(Filter branches, Filter tags, Filter paths) {}

    record PullRequest(List<String> types, Filter branches, Filter paths) {
        PullRequest {
            types = List.copyOf(types);
        }
    }

    private final Push push;
    private final PullRequest pullRequest;
    private final Map<String, Input> inputs;
    private final List<Schedule> schedules;

    /** {@code push}/{@code pullRequest} null when not triggered; {@code inputs} null when not dispatchable. */
    Triggers(Push push, PullRequest pullRequest, Map<String, Input> inputs, List<Schedule> schedules) {
        this.push = push;
        this.pullRequest = pullRequest;
        this.inputs = inputs == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(inputs));
        this.schedules = List.copyOf(schedules);
    }

    /**
     * Whether a push of {@code ref} ({@code refs/heads/main}, {@code refs/tags/v1}) runs the workflow. Only
     * branch filters leave tags out and only tag filters leave branches out, as in GitHub; paths filters do not
     * apply to tags. {@code changedPaths} null means unknown: paths filters pass.
     */
    public boolean onPush(String ref, List<String> changedPaths) {
        if (push == null || ref == null) {
            return false;
        }
        if (ref.startsWith("refs/heads/")) {
            if (!push.branches().defined() && push.tags().defined()) {
                return false;
            }
            return push.branches().matches(ref.substring("refs/heads/".length()))
                    && push.paths().matchesAny(changedPaths);
        }
        if (ref.startsWith("refs/tags/")) {
            if (!push.tags().defined() && push.branches().defined()) {
                return false;
            }
            return push.tags().matches(ref.substring("refs/tags/".length()));
        }
        return false;
    }

    /**
     * A pull request opened or updated against {@code baseBranch}: its types include one of the default ones
     * (opened, synchronize, reopened) and its filters pass. {@link #onPullRequest(String, String, List)} is exact.
     */
    public boolean onPullRequest(String baseBranch, List<String> changedPaths) {
        return pullRequest != null
                && pullRequest.types().stream().anyMatch(DEFAULT_PULL_REQUEST_TYPES::contains)
                && pullRequestFilters(baseBranch, changedPaths);
    }

    private boolean pullRequestFilters(String baseBranch, List<String> changedPaths) {
        String base = baseBranch.startsWith("refs/heads/") ? baseBranch.substring(11) : baseBranch;
        return pullRequest.branches().matches(base) && pullRequest.paths().matchesAny(changedPaths);
    }

    /** A pull request activity ({@code opened}, {@code synchronize}, {@code reopened}, {@code closed}). */
    public boolean onPullRequest(String action, String baseBranch, List<String> changedPaths) {
        if (pullRequest == null || !pullRequest.types().contains(action.toLowerCase(Locale.ROOT))) {
            return false;
        }
        return pullRequestFilters(baseBranch, changedPaths);
    }

    /** Whether the workflow has {@code workflow_dispatch}. */
    public boolean dispatchable() {
        return inputs != null;
    }

    /** The dispatch inputs in file order; empty when none or not dispatchable. */
    public Map<String, Input> dispatchInputs() {
        return inputs == null ? Map.of() : inputs;
    }

    /**
     * The inputs of a dispatch resolved: defaults filled in, each checked against its type.
     *
     * @throws IllegalArgumentException naming the input that is unknown, missing or invalid
     */
    public Map<String, String> resolveInputs(Map<String, String> given) {
        if (inputs == null) {
            throw new IllegalArgumentException("the workflow has no workflow_dispatch trigger");
        }
        for (String name : given.keySet()) {
            if (!inputs.containsKey(name)) {
                throw new IllegalArgumentException("unknown input '" + name + "' (inputs: "
                        + (inputs.isEmpty() ? "none" : String.join(", ", inputs.keySet())) + ")");
            }
        }
        Map<String, String> resolved = new LinkedHashMap<>();
        for (Map.Entry<String, Input> e : inputs.entrySet()) {
            String name = e.getKey();
            Input in = e.getValue();
            String value = given.get(name);
            if (value == null) {
                value = in.defaultValue();
            }
            if (value == null) {
                if (in.required()) {
                    throw new IllegalArgumentException("input '" + name + "' is required");
                }
                value = in.type().equals("boolean") ? "false" : "";
            }
            checkInput(name, in, value);
            resolved.put(name, value);
        }
        return Collections.unmodifiableMap(resolved);
    }

    static void checkInput(String name, Input in, String value) {
        switch (in.type()) {
            case "boolean" -> {
                if (!value.equals("true") && !value.equals("false")) {
                    throw new IllegalArgumentException(
                            "input '" + name + "' is a boolean: 'true' or 'false', not '" + value + "'");
                }
            }
            case "choice" -> {
                if (!in.options().contains(value)) {
                    throw new IllegalArgumentException("input '" + name + "' must be one of "
                            + String.join(", ", in.options()) + ", not '" + value + "'");
                }
            }
            case "number" -> {
                if (!value.isEmpty() && Double.isNaN(Values.toNumber(value))) {
                    throw new IllegalArgumentException("input '" + name + "' is a number, not '" + value + "'");
                }
            }
            default -> {
                // string and environment take any text
            }
        }
    }

    /** The cron schedules in file order. */
    public List<Schedule> schedules() {
        return schedules;
    }

    /** The pull request activity types that trigger, empty when pull_request is not a trigger. */
    public List<String> pullRequestTypes() {
        return pullRequest == null ? List.of() : pullRequest.types();
    }

    /** Whether {@code push} is a trigger. */
    public boolean onPushEvent() {
        return push != null;
    }
}
