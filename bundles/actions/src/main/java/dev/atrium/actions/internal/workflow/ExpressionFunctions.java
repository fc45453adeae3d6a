package dev.atrium.actions.internal.workflow;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The functions an expression may call, their arity checked at parse and their GitHub behaviour. */
final class ExpressionFunctions {

    static final Set<String> STATUS = Set.of("success", "failure", "cancelled", "always");

    /** Lower-case name → {min, max} arguments (max -1: any). */
    private static final Map<String, Arity> ARITY = Map.ofEntries(
            Map.entry("contains", new Arity(2, 2)),
            Map.entry("startswith", new Arity(2, 2)),
            Map.entry("endswith", new Arity(2, 2)),
            Map.entry("format", new Arity(1, -1)),
            Map.entry("join", new Arity(1, 2)),
            Map.entry("tojson", new Arity(1, 1)),
            Map.entry("fromjson", new Arity(1, 1)),
            Map.entry("success", new Arity(0, 0)),
            Map.entry("failure", new Arity(0, 0)),
            Map.entry("cancelled", new Arity(0, 0)),
            Map.entry("always", new Arity(0, 0)));

    private record Arity(int min, int max) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    private ExpressionFunctions() {}

    /** The canonical (lower-case) name, or an exception naming the function when it cannot be called. */
    static String check(String name, int argc, int position) {
        String n = name.toLowerCase(Locale.ROOT);
        if (n.equals("hashfiles")) {
            throw new ExpressionException("function 'hashFiles' is not supported", position);
        }
        Arity arity = ARITY.get(n);
        if (arity == null) {
            throw new ExpressionException("unknown function '" + name + "'", position);
        }
        if (argc < arity.min() || (arity.max() >= 0 && argc > arity.max())) {
            String expected = arity.max() < 0
                    ? "at least " + arity.min()
                    : (arity.min() == arity.max() ? Integer.toString(arity.min()) : arity.min() + " to " + arity.max());
            throw new ExpressionException(
                    "function '" + name + "' takes " + expected + " argument(s), not " + argc, position);
        }
        return n;
    }

    static Object call(String function, List<Expression> args, Context context) {
        if (STATUS.contains(function)) {
            return switch (function) {
                case "success" -> context.status() == Context.Status.SUCCESS;
                case "failure" -> context.status() == Context.Status.FAILURE;
                case "cancelled" -> context.status() == Context.Status.CANCELLED;
                default -> true; // always()
            };
        }
        Object[] v = new Object[args.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = args.get(i).evaluate(context);
        }
        return switch (function) {
            case "contains" -> contains(v[0], v[1]);
            case "startswith" -> lower(v[0]).startsWith(lower(v[1]));
            case "endswith" -> lower(v[0]).endsWith(lower(v[1]));
            case "format" -> format(v);
            case "join" -> join(v[0], v.length > 1 ? Values.render(v[1]) : ",");
            case "tojson" -> Values.json(v[0]);
            case "fromjson" -> fromJson(Values.render(v[0]));
            default -> throw new IllegalStateException("unchecked function " + function);
        };
    }

    private static String lower(Object v) {
        return Values.render(v).toLowerCase(Locale.ROOT);
    }

    private static boolean contains(Object search, Object item) {
        if (search instanceof List<?> list) {
            return list.stream().anyMatch(e -> Values.looseEquals(e, item));
        }
        return lower(search).contains(lower(item));
    }

    private static String join(Object array, String separator) {
        if (array instanceof List<?> list) {
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(separator);
                }
                out.append(Values.render(list.get(i)));
            }
            return out.toString();
        }
        return Values.render(array);
    }

    /** {0}, {1}… replaced by the arguments; {{ and }} are literal braces. */
    private static String format(Object[] v) {
        String f = Values.render(v[0]);
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < f.length()) {
            char c = f.charAt(i);
            if (c == '{' && i + 1 < f.length() && f.charAt(i + 1) == '{') {
                out.append('{');
                i += 2;
            } else if (c == '}' && i + 1 < f.length() && f.charAt(i + 1) == '}') {
                out.append('}');
                i += 2;
            } else if (c == '{') {
                int close = f.indexOf('}', i);
                String digits = close < 0 ? "" : f.substring(i + 1, close);
                if (digits.isEmpty() || !digits.chars().allMatch(Character::isDigit) || digits.length() > 6) {
                    throw new IllegalArgumentException("format: invalid placeholder in '" + f + "'");
                }
                int n = Integer.parseInt(digits);
                if (n + 1 >= v.length) {
                    throw new IllegalArgumentException("format: placeholder {" + n + "} has no argument");
                }
                out.append(Values.render(v[n + 1]));
                i = close + 1;
            } else if (c == '}') {
                throw new IllegalArgumentException("format: unmatched '}' in '" + f + "'");
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static Object fromJson(String text) {
        try {
            return JSON.readValue(text, Object.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("fromJSON: not JSON: " + e.getOriginalMessage(), e);
        }
    }
}
