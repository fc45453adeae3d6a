package dev.atrium.actions.internal;

import dev.atrium.actions.internal.workflow.Context;
import dev.atrium.actions.internal.workflow.Expressions;
import java.util.Map;

/** Expressions evaluated where a run needs them, with the contexts it has at that point. */
final class Eval {

    private Eval() {}

    /** {@code template} with each {@code ${{ }}} replaced by its value ("" for null). */
    static String text(String template, Map<String, Object> contexts) {
        if (template == null) {
            return "";
        }
        if (!template.contains("${{")) {
            return template;
        }
        return Expressions.interpolate(template, Context.of(contexts));
    }

    static String render(Object value) {
        return Expressions.render(value);
    }

    /** An {@code if} (empty: {@code success()}) under the status so far: success, failure or cancelled. */
    static boolean condition(String ifExpression, Map<String, Object> contexts, String status) {
        Context.Status s = switch (status) {
            case "failure", "timed_out" -> Context.Status.FAILURE;
            case "cancelled" -> Context.Status.CANCELLED;
            default -> Context.Status.SUCCESS;
        };
        return Expressions.condition(ifExpression, new Context(contexts, s));
    }
}
