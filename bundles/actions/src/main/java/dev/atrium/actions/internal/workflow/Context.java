package dev.atrium.actions.internal.workflow;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What an expression sees: the named contexts ({@code github, env, matrix, needs, steps, secrets, inputs, job,
 * runner, strategy, vars}) as nested {@code Map<String,Object>}, {@code List}, String, Number, Boolean or null, and
 * the status the status functions read.
 *
 * @param contexts the named contexts by name; a missing one evaluates to null
 * @param status {@code success()} is true for SUCCESS, {@code failure()} for FAILURE, {@code cancelled()} for
 *     CANCELLED. For a step: the job's steps so far; for a job's {@code if}: its needs.
 */
public record Context(Map<String, Object> contexts, Status status) {

    /** The context names an expression may use; any other is refused at parse, as GitHub does. */
    public static final Set<String> NAMES = Set.of(
            "github", "env", "matrix", "needs", "steps", "secrets", "inputs", "job", "runner", "strategy", "vars");

    /** The status the status functions read. */
    public enum Status {
        SUCCESS,
        FAILURE,
        CANCELLED
    }

    public Context {
        contexts = Collections.unmodifiableMap(new LinkedHashMap<>(contexts));
    }

    /** Contexts with status SUCCESS. */
    public static Context of(Map<String, Object> contexts) {
        return new Context(contexts, Status.SUCCESS);
    }

    /** No contexts, status SUCCESS. */
    public static Context empty() {
        return new Context(Map.of(), Status.SUCCESS);
    }

    /** This context with one named context set or replaced. */
    public Context with(String name, Object value) {
        Map<String, Object> copy = new LinkedHashMap<>(contexts);
        copy.put(name, value);
        return new Context(copy, status);
    }

    /** This context with another status. */
    public Context withStatus(Status s) {
        return new Context(contexts, s);
    }

    /** A named context, its name compared ignoring case; null when absent. */
    public Object named(String name) {
        Object v = contexts.get(name);
        if (v != null) {
            return v;
        }
        return contexts.get(name.toLowerCase(Locale.ROOT));
    }
}
