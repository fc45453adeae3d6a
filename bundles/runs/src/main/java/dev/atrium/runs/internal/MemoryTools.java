package dev.atrium.runs.internal;

import java.io.IOException;
import java.util.Set;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.atrium.memories.api.Memories;
import dev.atrium.runs.api.AgentTool;

/** The memory tools, present only while the memories capability's service is (its bundle may be disabled). */
final class MemoryTools {

    static final ObjectMapper JSON = new ObjectMapper();

    static JsonNode args(String arguments) throws IOException {
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

    @Component(service = AgentTool.class)
    public static class Search implements AgentTool {
        private final Memories memories;

        @Activate
        public Search(@Reference Memories memories) {
            this.memories = memories;
        }

        @Override
        public String name() {
            return "memory_search";
        }

        @Override
        public String description() {
            return "Search the workspace's memories (keywords, \"phrases\", -exclusions). Returns the best matches.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}},\"required\":[\"query\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of();
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            var found = memories.search(context.spaceId(), text(args(arguments), "query"), 10);
            return JSON.writeValueAsString(found.stream().map(n -> java.util.Map.of("id", n.id(), "content", n.content())).toList());
        }
    }

    @Component(service = AgentTool.class)
    public static class Add implements AgentTool {
        private final Memories memories;

        @Activate
        public Add(@Reference Memories memories) {
            this.memories = memories;
        }

        @Override
        public String name() {
            return "memory_add";
        }

        @Override
        public String description() {
            return "Remember a short note in the workspace's memories.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\"}},\"required\":[\"content\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of();
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            var note = memories.add(context.spaceId(), text(args(arguments), "content"));
            return JSON.writeValueAsString(java.util.Map.of("id", note.id(), "content", note.content()));
        }
    }

    private MemoryTools() {
    }
}
