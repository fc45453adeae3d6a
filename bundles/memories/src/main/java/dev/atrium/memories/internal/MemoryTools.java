package dev.atrium.memories.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ToolArguments;
import java.io.IOException;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The agent's memory tools ({@code memory_search}, {@code memory_add}), registered by this bundle as
 * {@link AgentTool} services: they exist exactly while the memories capability runs. They live here rather than in
 * the runs bundle so that no other bundle wires to a package of this one: an updated memories bundle would otherwise
 * stay pinned (old revision and class loader) by its importer until a refresh. The run's tool executor has proven the
 * requester and the workspace ({@link AgentTool.Context#spaceId()}) just before the call.
 */
final class MemoryTools {

    static final ObjectMapper JSON = JsonMappers.create();

    @Component(service = AgentTool.class)
    public static class Search implements AgentTool {
        private final MemoryStore store;

        @Activate
        public Search(@Reference MemoryStore store) {
            this.store = store;
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
            return Set.of("storage.read"); // DESIGN §2: reading the workspace's stored data
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            String query = ToolArguments.text(ToolArguments.parse(arguments), "query");
            if (query.length() > 1000) {
                throw new IOException("query must be at most 1000 characters");
            }
            var found = store.search(context.spaceId(), query, 10, 0);
            return JSON.writeValueAsString(found.stream()
                    .map(n -> java.util.Map.of("id", n.id(), "content", n.content()))
                    .toList());
        }
    }

    @Component(service = AgentTool.class)
    public static class Add implements AgentTool {
        private final MemoryStore store;

        @Activate
        public Add(@Reference MemoryStore store) {
            this.store = store;
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
            return Set.of("storage.write"); // DESIGN §2: changing the workspace's stored data
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            String content = ToolArguments.text(ToolArguments.parse(arguments), "content")
                    .trim();
            if (content.codePointCount(0, content.length()) > MemoryResource.MAX_CONTENT) {
                throw new IOException("content must be at most " + MemoryResource.MAX_CONTENT + " characters");
            }
            var note = store.create(context.spaceId(), content);
            return JSON.writeValueAsString(java.util.Map.of("id", note.id(), "content", note.content()));
        }
    }

    private MemoryTools() {}
}
