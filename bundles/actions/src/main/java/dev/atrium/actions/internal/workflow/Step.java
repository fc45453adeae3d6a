package dev.atrium.actions.internal.workflow;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A step of a job: exactly one of {@code run} and {@code uses} is set.
 *
 * @param id null when the step has none
 * @param name null when the step has none
 * @param ifExpression null when the step has none (see {@link Expressions#condition(String, Context)})
 * @param run the script, null for a {@code uses} step
 * @param uses the built-in action, null for a {@code run} step
 * @param with the inputs of a {@code uses} step (values may hold {@code ${{ }}}); empty for {@code run}
 * @param shell null when not set (then the job's and workflow's defaults apply)
 * @param workingDirectory null when not set
 * @param timeoutMinutes 0 when the step has no limit of its own
 * @param line 1-based line of the step in the file
 */
public record Step(
        String id,
        String name,
        String ifExpression,
        String run,
        Uses uses,
        Map<String, String> with,
        Map<String, String> env,
        String shell,
        String workingDirectory,
        boolean continueOnError,
        double timeoutMinutes,
        int line) {

    public Step {
        with = Collections.unmodifiableMap(new LinkedHashMap<>(with));
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
    }
}
