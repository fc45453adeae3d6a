package dev.atrium.operations.internal;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Writes an operator's configuration file as FileInstall reads it: a {@code .config} in ConfigAdmin's typed format
 * ({@code maxBodyBytes=L"4500"}, {@code hosts=["a","b"]}), or a {@code .cfg} (plain properties, where every value is
 * text the component converts).
 */
final class TypedConfigFormat {

    private TypedConfigFormat() {}

    /** The {@code .config} text of the properties, one per line, in the map's order. */
    static String config(Map<String, Object> properties) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Object> e : properties.entrySet()) {
            out.append(e.getKey()).append('=');
            Object value = e.getValue();
            if (value instanceof Collection<?> list) {
                out.append(list.isEmpty() ? "" : prefix(list.iterator().next())).append('[');
                boolean first = true;
                for (Object item : list) {
                    out.append(first ? "" : ",").append(quoted(item));
                    first = false;
                }
                out.append(']');
            } else if (value instanceof Object[] array) {
                out.append(array.length == 0 ? "" : prefix(array[0])).append('[');
                for (int i = 0; i < array.length; i++) {
                    out.append(i == 0 ? "" : ",").append(quoted(array[i]));
                }
                out.append(']');
            } else {
                out.append(prefix(value)).append(quoted(value));
            }
            out.append('\n');
        }
        return out.toString();
    }

    /** The {@code .cfg} text of the properties: each value as text, a list joined by commas. */
    static Properties cfg(Map<String, Object> properties) {
        Properties out = new Properties();
        properties.forEach((k, v) -> out.setProperty(
                k,
                v instanceof Collection<?> c
                        ? String.join(",", c.stream().map(String::valueOf).toList())
                        : v instanceof Object[] a
                                ? String.join(
                                        ",",
                                        List.of(a).stream().map(String::valueOf).toList())
                                : String.valueOf(v)));
        return out;
    }

    /**
     * The type letter of a value; doubles and floats are written as text (the typed format keeps their raw bits),
     * which the component converts as it would an environment variable's.
     */
    private static String prefix(Object value) {
        if (value instanceof Long) {
            return "L";
        }
        if (value instanceof Integer) {
            return "I";
        }
        if (value instanceof Short) {
            return "S";
        }
        if (value instanceof Byte) {
            return "X";
        }
        if (value instanceof Character) {
            return "C";
        }
        if (value instanceof Boolean) {
            return "B";
        }
        return "";
    }

    private static String quoted(Object value) {
        String text = String.valueOf(value);
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"', '\\' -> out.append('\\').append(c);
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < ' ' || c > '~') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
