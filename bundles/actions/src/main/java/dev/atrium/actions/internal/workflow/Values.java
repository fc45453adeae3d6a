package dev.atrium.actions.internal.workflow;

import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/** GitHub's expression value rules: truthiness, number coercion, loose equality, rendering as text and JSON. */
final class Values {

    private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");
    private static final Pattern HEX = Pattern.compile("0x[0-9a-fA-F]+");
    private static final Pattern OCTAL = Pattern.compile("0o[0-7]+");

    private Values() {}

    static boolean truthy(Object v) {
        if (v == null) {
            return false;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof Number n) {
            double d = n.doubleValue();
            return d != 0 && !Double.isNaN(d);
        }
        if (v instanceof String s) {
            return !s.isEmpty();
        }
        return true;
    }

    /** Coerces the way GitHub does when operand types differ: null 0, booleans 1/0, strings parsed, others NaN. */
    static double toNumber(Object v) {
        if (v == null) {
            return 0;
        }
        if (v instanceof Boolean b) {
            return b ? 1 : 0;
        }
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        if (v instanceof String s) {
            String t = s.strip();
            if (t.isEmpty()) {
                return 0;
            }
            if (DECIMAL.matcher(t).matches()) {
                return Double.parseDouble(t);
            }
            if (HEX.matcher(t).matches()) {
                return Long.parseLong(t.substring(2), 16);
            }
            if (OCTAL.matcher(t).matches()) {
                return Long.parseLong(t.substring(2), 8);
            }
            if (t.equals("Infinity") || t.equals("+Infinity")) {
                return Double.POSITIVE_INFINITY;
            }
            if (t.equals("-Infinity")) {
                return Double.NEGATIVE_INFINITY;
            }
            return Double.NaN;
        }
        return Double.NaN;
    }

    private static boolean isPrimitive(Object v) {
        return v == null || v instanceof Boolean || v instanceof Number || v instanceof String;
    }

    private static int kind(Object v) {
        if (v == null) {
            return 0;
        }
        if (v instanceof Boolean) {
            return 1;
        }
        if (v instanceof Number) {
            return 2;
        }
        if (v instanceof String) {
            return 3;
        }
        return 4;
    }

    /** {@code ==}: same kinds compare directly (strings ignoring case); different kinds compare as numbers. */
    static boolean looseEquals(Object a, Object b) {
        int ka = kind(a);
        int kb = kind(b);
        if (ka == kb) {
            return switch (ka) {
                case 0 -> true;
                case 1 -> a.equals(b);
                case 2 -> ((Number) a).doubleValue() == ((Number) b).doubleValue();
                case 3 -> ((String) a).equalsIgnoreCase((String) b);
                default -> a == b; // objects and arrays are equal only to themselves
            };
        }
        if (!isPrimitive(a) || !isPrimitive(b)) {
            return false;
        }
        return toNumber(a) == toNumber(b);
    }

    /**
     * {@code < <= > >=}: the sign of a comparison, or null when the operands do not compare (NaN, objects), which
     * makes every ordering operator false as in GitHub.
     */
    static Integer compare(Object a, Object b) {
        if (!isPrimitive(a) || !isPrimitive(b)) {
            return null;
        }
        if (a instanceof String sa && b instanceof String sb) {
            return Integer.signum(sa.compareToIgnoreCase(sb));
        }
        double x = toNumber(a);
        double y = toNumber(b);
        if (Double.isNaN(x) || Double.isNaN(y)) {
            return null;
        }
        return Double.compare(x, y) == 0 ? 0 : (x < y ? -1 : 1);
    }

    /** Text of a value as interpolation and string functions see it: null empty, numbers without ".0", JSON. */
    static String render(Object v) {
        if (v == null) {
            return "";
        }
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Boolean b) {
            return b ? "true" : "false";
        }
        if (v instanceof Number n) {
            return number(n);
        }
        return json(v);
    }

    static String number(Number n) {
        if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte) {
            return n.toString();
        }
        double d = n.doubleValue();
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return new BigDecimal(Double.toString(d)).stripTrailingZeros().toPlainString();
    }

    /** JSON indented by two spaces, as GitHub's toJSON prints it. */
    static String json(Object v) {
        StringBuilder out = new StringBuilder();
        json(v, out, "");
        return out.toString();
    }

    private static void json(Object v, StringBuilder out, String indent) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String s) {
            quote(s, out);
        } else if (v instanceof Boolean || v instanceof Number) {
            out.append(render(v));
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                out.append("{}");
                return;
            }
            out.append("{\n");
            String inner = indent + "  ";
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) {
                    out.append(",\n");
                }
                first = false;
                out.append(inner);
                quote(String.valueOf(e.getKey()), out);
                out.append(": ");
                json(e.getValue(), out, inner);
            }
            out.append('\n').append(indent).append('}');
        } else if (v instanceof List<?> l) {
            if (l.isEmpty()) {
                out.append("[]");
                return;
            }
            out.append("[\n");
            String inner = indent + "  ";
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    out.append(",\n");
                }
                out.append(inner);
                json(l.get(i), out, inner);
            }
            out.append('\n').append(indent).append(']');
        } else {
            quote(v.toString(), out);
        }
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** A property of an object (keys ignore case, as GitHub's contexts do) or an element of an array; else null. */
    static Object index(Object target, Object key) {
        if (target instanceof Map<?, ?> m) {
            if (!(key instanceof String) && !(key instanceof Number) && !(key instanceof Boolean)) {
                return null;
            }
            String k = render(key);
            if (m.containsKey(k)) {
                return m.get(k);
            }
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (String.valueOf(e.getKey()).equalsIgnoreCase(k)) {
                    return e.getValue();
                }
            }
            return null;
        }
        if (target instanceof List<?> l) {
            double d = toNumber(key);
            if (Double.isNaN(d) || d < 0 || d != Math.floor(d) || d >= l.size()) {
                return null;
            }
            return l.get((int) d);
        }
        return null;
    }
}
