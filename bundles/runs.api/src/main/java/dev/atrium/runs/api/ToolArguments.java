package dev.atrium.runs.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Reading an {@link AgentTool}'s JSON arguments, the same way for every tool: a problem is an {@link IOException}
 * whose message the model sees as the tool's error result.
 */
public final class ToolArguments {

    private static final ObjectMapper JSON = new ObjectMapper();

    private ToolArguments() {}

    /** The arguments as a JSON object; fails when they are not valid JSON or not an object. */
    public static JsonNode parse(String arguments) throws IOException {
        try {
            JsonNode n = arguments == null ? null : JSON.readTree(arguments);
            if (n == null || !n.isObject()) {
                throw new IOException("arguments must be a JSON object");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw new IOException("arguments are not valid JSON");
        }
    }

    /** The non-blank string {@code field} of {@code args}; fails naming the field when it is missing or not one. */
    public static String text(JsonNode args, String field) throws IOException {
        JsonNode v = args.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank()) {
            throw new IOException(field + " (a non-empty string) is required");
        }
        return v.asText();
    }
}
