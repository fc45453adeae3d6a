package dev.atrium.actions.internal.workflow;

import java.util.ArrayList;
import java.util.List;

/**
 * GitHub's expression language, the documented subset: literals, property access, {@code ! < <= > >= == != && ||},
 * and the functions contains, startsWith, endsWith, format, join, toJSON, fromJSON, success, failure, cancelled,
 * always. Anything else is refused at parse with its position.
 */
public final class Expressions {

    private static final String OPEN = "${{";
    private static final String CLOSE = "}}";

    private Expressions() {}

    /** One expression (the text inside {@code ${{ }}}, without them). */
    public static Expression parse(String expression) {
        return ExpressionParser.parse(expression, 0);
    }

    /** A {@code ${{ … }}} in a text: where its expression starts and ends (exclusive), where the whole ends. */
    record Segment(int start, int exprStart, int exprEnd, int end) {}

    /** The {@code ${{ }}} segments of a text; a {@code }}} inside a quoted string does not close one. */
    static List<Segment> segments(String text) {
        List<Segment> out = new ArrayList<>();
        int from = 0;
        while (true) {
            int start = text.indexOf(OPEN, from);
            if (start < 0) {
                return out;
            }
            int i = start + OPEN.length();
            boolean quoted = false;
            int close = -1;
            while (i < text.length()) {
                char c = text.charAt(i);
                if (c == '\'') {
                    quoted = !quoted; // an escaped '' toggles twice
                } else if (!quoted && text.startsWith(CLOSE, i)) {
                    close = i;
                    break;
                }
                i++;
            }
            if (close < 0) {
                throw new ExpressionException("'${{' without a closing '}}' at position " + (start + 1), start);
            }
            out.add(new Segment(start, start + OPEN.length(), close, close + CLOSE.length()));
            from = close + CLOSE.length();
        }
    }

    /** Checks every {@code ${{ }}} of a text parses; the parser of workflows calls it on every such string. */
    public static void validate(String text) {
        for (Segment s : segments(text)) {
            ExpressionParser.parse(text.substring(s.exprStart(), s.exprEnd()), s.exprStart());
        }
    }

    /** The expressions of a text's {@code ${{ }}} segments. */
    static List<Expression> expressionsIn(String text) {
        List<Expression> all = new ArrayList<>();
        for (Segment s : segments(text)) {
            all.add(ExpressionParser.parse(text.substring(s.exprStart(), s.exprEnd()), s.exprStart()));
        }
        return all;
    }

    /**
     * The text with each {@code ${{ … }}} replaced by its value rendered GitHub's way: null as empty, numbers
     * without ".0", objects and arrays as JSON.
     */
    public static String interpolate(String text, Context context) {
        List<Segment> segments = segments(text);
        if (segments.isEmpty()) {
            return text;
        }
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (Segment s : segments) {
            out.append(text, from, s.start());
            Expression e = ExpressionParser.parse(text.substring(s.exprStart(), s.exprEnd()), s.exprStart());
            out.append(Values.render(e.evaluate(context)));
            from = s.end();
        }
        out.append(text, from, text.length());
        return out.toString();
    }

    /**
     * Parses an {@code if}: it may omit {@code ${{ }}}; one that calls none of the status functions means
     * {@code success() && (expr)}, as in GitHub. An empty one means {@code success()}.
     */
    public static Expression condition(String ifExpression) {
        String inner = unwrap(ifExpression == null ? "" : ifExpression);
        if (inner.isBlank()) {
            return parse("success()");
        }
        Expression e = parse(inner);
        if (e.callsStatusFunction()) {
            return e;
        }
        Expression success = parse("success()");
        return new ExpressionNodes.Binary(ExpressionNodes.Op.AND, success, e);
    }

    /** Evaluates an {@code if} (see {@link #condition(String)}) to its truth. */
    public static boolean condition(String ifExpression, Context context) {
        return Values.truthy(condition(ifExpression).evaluate(context));
    }

    /**
     * An {@code if} wrapped whole in one {@code ${{ }}} is its inside. GitHub treats any other text that has
     * "${{" as a template, which this refuses rather than guess.
     */
    private static String unwrap(String ifExpression) {
        String t = ifExpression.strip();
        if (!t.contains(OPEN)) {
            return t;
        }
        List<Segment> segments = segments(t);
        if (segments.size() == 1
                && segments.get(0).start() == 0
                && segments.get(0).end() == t.length()) {
            return t.substring(segments.get(0).exprStart(), segments.get(0).exprEnd());
        }
        throw new ExpressionException(
                "an 'if' mixes '${{ }}' with other text; write the whole condition inside one '${{ }}' or none", 0);
    }

    /** The truthiness of a value under GitHub's rules. */
    public static boolean truthy(Object value) {
        return Values.truthy(value);
    }

    /** The text of a value as interpolation renders it. */
    public static String render(Object value) {
        return Values.render(value);
    }
}
