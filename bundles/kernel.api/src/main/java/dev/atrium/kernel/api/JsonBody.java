package dev.atrium.kernel.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.util.Optional;
import java.util.Set;

/**
 * Reads fields of a JSON request body with messages that say which field is wrong and why. Absent and
 * {@code null} fields read as empty; a field of the wrong type is 400 {@code BAD_REQUEST}.
 */
public final class JsonBody {

    /** Reads trees only, so the classes it caches are Jackson's own, never a capability's. */
    private static final ObjectReader TREES = JsonMappers.create().reader();

    private final JsonNode node;

    private JsonBody(JsonNode node) {
        this.node = node;
    }

    /** Wraps a parsed body; a missing body or one that is not a JSON object is 400. */
    public static JsonBody of(JsonNode node) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            throw ApiException.badRequest("a JSON object body is required");
        }
        if (!node.isObject()) {
            throw ApiException.badRequest("the body must be a JSON object");
        }
        return new JsonBody(node);
    }

    /**
     * The body of a POST that may come without one, with any or no {@code Content-Type} (a method that takes it as a
     * {@code String}): null when it is empty or JSON {@code null}, 400 when it is not JSON.
     *
     * @since 2.11
     */
    public static JsonNode optional(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            JsonNode n = TREES.readTree(text);
            return n == null || n.isNull() || n.isMissingNode() ? null : n;
        } catch (IOException e) {
            throw ApiException.badRequest("the body must be JSON");
        }
    }

    public boolean has(String field) {
        JsonNode v = node.get(field);
        return v != null && !v.isNull();
    }

    public Optional<String> string(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isTextual()) {
            throw ApiException.badRequest(field + " must be a string");
        }
        return Optional.of(v.textValue());
    }

    public String requiredString(String field) {
        return string(field).orElseThrow(() -> ApiException.badRequest(field + " is required"));
    }

    /** A required string, trimmed, between {@code min} and {@code max} characters. */
    public String text(String field, int min, int max) {
        return checkLength(field, requiredString(field).trim(), min, max);
    }

    /** An optional string, trimmed, between {@code min} and {@code max} characters when present. */
    public Optional<String> optionalText(String field, int min, int max) {
        return string(field).map(s -> checkLength(field, s.trim(), min, max));
    }

    public Optional<Boolean> bool(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isBoolean()) {
            throw ApiException.badRequest(field + " must be a boolean");
        }
        return Optional.of(v.booleanValue());
    }

    /** An optional string that must be one of {@code allowed}. */
    public Optional<String> oneOf(String field, Set<String> allowed) {
        return string(field).map(s -> {
            if (!allowed.contains(s)) {
                throw ApiException.badRequest(field + " must be one of "
                        + String.join(", ", allowed.stream().sorted().toList()));
            }
            return s;
        });
    }

    private static String checkLength(String field, String value, int min, int max) {
        int length = value.codePointCount(0, value.length());
        if (length < min) {
            throw ApiException.badRequest(
                    min == 1 ? field + " must not be empty" : field + " must be at least " + min + " characters");
        }
        if (length > max) {
            throw ApiException.badRequest(field + " must be at most " + max + " characters");
        }
        return value;
    }
}
