package dev.atrium.actions.internal.workflow;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job of a workflow.
 *
 * @param name null when the job has none (then its id is its name); may hold {@code ${{ }}}
 * @param runsOn the runner label; may be a {@code ${{ matrix.* }}} expression, see {@link #runsOn(Map)}
 * @param ifExpression null when the job has none
 * @param timeoutMinutes 360 unless set
 * @param strategy null when the job has no matrix
 * @param concurrency null when the job has none
 * @param line 1-based line of the job's id in the file
 */
public record Job(
        String id,
        String name,
        String runsOn,
        List<String> needs,
        String ifExpression,
        Map<String, String> env,
        Defaults defaults,
        double timeoutMinutes,
        Strategy strategy,
        Concurrency concurrency,
        Map<String, String> outputs,
        List<Step> steps,
        boolean continueOnError,
        int line) {

    public static final int DEFAULT_TIMEOUT_MINUTES = 360;

    public Job {
        needs = List.copyOf(needs);
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        outputs = Collections.unmodifiableMap(new LinkedHashMap<>(outputs));
        steps = List.copyOf(steps);
    }

    /**
     * The runner label for one matrix combination ({@code runs-on} may only read the matrix); the parser checked
     * every combination's label is a known one.
     */
    public String runsOn(Map<String, Object> matrix) {
        return Expressions.interpolate(runsOn, Context.empty().with("matrix", matrix))
                .strip();
    }

    /** The matrix combinations this job runs as; one empty combination when it has no matrix. */
    public List<Map<String, Object>> combinations() {
        return strategy == null ? List.of(Map.of()) : strategy.matrix().expand();
    }
}
