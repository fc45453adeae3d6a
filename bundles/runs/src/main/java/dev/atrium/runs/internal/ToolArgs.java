package dev.atrium.runs.internal;

import java.io.IOException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Reading a tool's JSON arguments; problems become error results the model sees. */
final class ToolArgs {

    private static final ObjectMapper JSON = new ObjectMapper();

    static JsonNode parse(String arguments) throws IOException {
        try {
            JsonNode n = JSON.readTree(arguments);
            if (n == null || !n.isObject()) {
                throw new IOException("arguments must be a JSON object");
            }
            return n;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException("arguments are not valid JSON");
        }
    }

    static String text(JsonNode args, String field) throws IOException {
        JsonNode v = args.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank()) {
            throw new IOException(field + " (a non-empty string) is required");
        }
        return v.asText();
    }

    private ToolArgs() {
    }
}
