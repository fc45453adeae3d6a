package dev.atrium.operations.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.atrium.kernel.api.ApiException;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The operator's values: checked and typed against their MetaType attribute, and shown as JSON. */
final class ConfigValues {

    private ConfigValues() {}

    /** A property without a description is a secret when its name says so. */
    static boolean secretName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.contains("key")
                || lower.contains("secret")
                || lower.contains("token")
                || lower.contains("password");
    }

    /**
     * The typed value of a JSON value for an attribute (a list for a multi-valued one); a 400 naming the property when
     * it is not of the attribute's type.
     */
    static Object convert(String pid, MetaTypes.Attribute attribute, JsonNode value) {
        if (attribute.cardinality() != 0) {
            List<Object> out = new ArrayList<>();
            if (value.isArray()) {
                value.forEach(item -> out.add(one(pid, attribute, item)));
            } else {
                out.add(one(pid, attribute, value));
            }
            return out;
        }
        return one(pid, attribute, value);
    }

    private static Object one(String pid, MetaTypes.Attribute attribute, JsonNode value) {
        if (!value.isValueNode() || value.isNull()) {
            throw wrong(pid, attribute, value);
        }
        String text = value.asText().trim();
        try {
            return switch (attribute.type()) {
                case "Long" -> integral(value, text, Long.MIN_VALUE, Long.MAX_VALUE);
                case "Integer" -> (int) integral(value, text, Integer.MIN_VALUE, Integer.MAX_VALUE);
                case "Short" -> (short) integral(value, text, Short.MIN_VALUE, Short.MAX_VALUE);
                case "Byte" -> (byte) integral(value, text, Byte.MIN_VALUE, Byte.MAX_VALUE);
                case "Double" -> value.isNumber() ? value.asDouble() : Double.valueOf(text);
                case "Float" -> value.isNumber() ? (float) value.asDouble() : Float.valueOf(text);
                case "Boolean" -> {
                    if (value.isBoolean()) {
                        yield value.asBoolean();
                    }
                    if (!text.equalsIgnoreCase("true") && !text.equalsIgnoreCase("false")) {
                        throw new IllegalArgumentException("not a boolean");
                    }
                    yield Boolean.valueOf(text);
                }
                case "Character", "Char" -> {
                    if (value.asText().length() != 1) {
                        throw new IllegalArgumentException("not one character");
                    }
                    yield value.asText().charAt(0);
                }
                default -> value.isTextual() ? value.asText() : text;
            };
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw wrong(pid, attribute, value);
        }
    }

    private static long integral(JsonNode value, String text, long min, long max) {
        long n;
        if (value.isNumber()) {
            if (!value.isIntegralNumber() || !value.canConvertToLong()) {
                throw new IllegalArgumentException("not an integer");
            }
            n = value.asLong();
        } else if (value.isTextual()) {
            n = Long.parseLong(text);
        } else {
            throw new IllegalArgumentException("not an integer");
        }
        if (n < min || n > max) {
            throw new ArithmeticException("out of range");
        }
        return n;
    }

    private static ApiException wrong(String pid, MetaTypes.Attribute attribute, JsonNode value) {
        String expected = switch (attribute.type()) {
            case "Long", "Integer", "Short", "Byte" -> "an integer (" + attribute.type() + ")";
            case "Double", "Float" -> "a number";
            case "Boolean" -> "true or false";
            case "Character", "Char" -> "one character";
            default -> "a string";
        };
        String shown = value.toString();
        return ApiException.badRequest("property '" + attribute.id() + "' of " + pid + " must be " + expected
                + (attribute.secret() ? "" : ", not " + (shown.length() > 60 ? shown.substring(0, 60) + "…" : shown)));
    }

    /** An attribute's default as its type has it (a number for an integer), its text when it is not of its type. */
    static Object typedDefault(MetaTypes.Attribute attribute) {
        Object value = attribute.defaultValue();
        if (value instanceof List<?> list) {
            return list.stream()
                    .map(v -> typedText(attribute, String.valueOf(v)))
                    .toList();
        }
        return value == null ? null : typedText(attribute, String.valueOf(value));
    }

    private static Object typedText(MetaTypes.Attribute attribute, String text) {
        try {
            return one("", attribute, TextNode.valueOf(text));
        } catch (ApiException e) {
            return text;
        }
    }

    /** A ConfigAdmin value as JSON: arrays and collections as lists. */
    static Object json(Object value) {
        if (value != null && value.getClass().isArray()) {
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < Array.getLength(value); i++) {
                out.add(Array.get(value, i));
            }
            return out;
        }
        return value instanceof Collection<?> c ? new ArrayList<>(c) : value;
    }

    /**
     * Properties as compared between what was written and what ConfigAdmin holds: each value as its text (a
     * {@code .cfg} holds text only), lists as lists of texts.
     */
    static Map<String, Object> comparable(Map<String, Object> properties) {
        Map<String, Object> out = new TreeMap<>();
        properties.forEach((k, v) -> {
            Object value = json(v);
            out.put(
                    k,
                    value instanceof List<?> list
                            ? list.stream().map(String::valueOf).toList()
                            : String.valueOf(value));
        });
        return out;
    }
}
