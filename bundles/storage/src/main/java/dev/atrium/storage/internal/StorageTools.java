package dev.atrium.storage.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ToolArguments;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The agent's workspace file tools ({@code storage_read}, {@code storage_list}, {@code storage_write}), registered
 * by this bundle as {@link AgentTool} services, so they exist exactly while the storage capability runs and a run's
 * tool executor offers them only with the grant each names ({@code storage.read}, {@code storage.write}). The
 * executor has proven the requester and the workspace ({@link AgentTool.Context#spaceId()}) just before the call.
 */
final class StorageTools {

    static final ObjectMapper JSON = JsonMappers.create();
    /** The most text a tool reads or writes at once: a model's context is no place for more. */
    static final int MAX_TEXT_BYTES = 256 * 1024;

    private static String path(JsonNode args, boolean allowRoot) throws IOException {
        JsonNode p = args.get("path");
        if (p == null || p.isNull()) {
            if (allowRoot) {
                return "";
            }
            throw new IOException("path is required");
        }
        if (!p.isTextual()) {
            throw new IOException("path must be a string");
        }
        try {
            return Paths.normalise("path", p.textValue(), allowRoot);
        } catch (ApiException e) {
            throw new IOException(e.getMessage());
        }
    }

    @Component(service = AgentTool.class)
    public static class Read implements AgentTool {
        private final Storage storage;

        @Activate
        public Read(@Reference Storage storage) {
            this.storage = storage;
        }

        @Override
        public String name() {
            return "storage_read";
        }

        @Override
        public String description() {
            return "Read a text file of the workspace's storage by its path (e.g. docs/plan.md).";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("storage.read");
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            String path = path(ToolArguments.parse(arguments), false);
            for (int attempt = 1; ; attempt++) {
                Entry file = storage.byPath(context.spaceId(), path)
                        .orElseThrow(() -> new IOException("no file at " + path));
                if (file.folder()) {
                    throw new IOException(path + " is a folder: use storage_list");
                }
                if (file.size() > MAX_TEXT_BYTES) {
                    throw new IOException(
                            path + " has " + file.size() + " bytes; at most " + MAX_TEXT_BYTES + " can be read");
                }
                try (InputStream in = storage.open(file, 0, -1)) {
                    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
                } catch (dev.atrium.blob.api.NoSuchBlobException replacedMeanwhile) {
                    if (attempt >= 5) {
                        throw new IOException(path + " changes too often to be read now");
                    }
                }
            }
        }
    }

    @Component(service = AgentTool.class)
    public static class ListFolder implements AgentTool {
        private final Storage storage;

        @Activate
        public ListFolder(@Reference Storage storage) {
            this.storage = storage;
        }

        @Override
        public String name() {
            return "storage_list";
        }

        @Override
        public String description() {
            return "List a folder of the workspace's storage (the root when path is empty): names, kinds and sizes.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("storage.read");
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            String path = path(ToolArguments.parse(arguments), true);
            Entry folder;
            try {
                folder = storage.folder(context.spaceId(), null, path);
            } catch (ApiException e) {
                throw new IOException(e.getMessage());
            }
            List<Map<String, Object>> items =
                    storage.list(context.spaceId(), folder, Storage.Sort.NAME, false, 100, 0).stream()
                            .map(e -> {
                                Map<String, Object> m = new LinkedHashMap<>();
                                m.put("path", e.path());
                                m.put("kind", e.kind());
                                m.put("size", e.size());
                                return m;
                            })
                            .toList();
            return JSON.writeValueAsString(
                    Map.of("path", path, "entries", items, "total", storage.count(context.spaceId(), folder)));
        }
    }

    @Component(service = AgentTool.class)
    public static class Write implements AgentTool {
        private final Storage storage;

        @Activate
        public Write(@Reference Storage storage) {
            this.storage = storage;
        }

        @Override
        public String name() {
            return "storage_write";
        }

        @Override
        public String description() {
            return "Write a text file of the workspace's storage at a path, creating it (and its folders) or replacing its content.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}},"
                    + "\"required\":[\"path\",\"content\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("storage.write");
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            String path = path(args, false);
            byte[] content = ToolArguments.text(args, "content").getBytes(StandardCharsets.UTF_8);
            if (content.length > MAX_TEXT_BYTES) {
                throw new IOException("content must be at most " + MAX_TEXT_BYTES + " bytes");
            }
            try {
                Entry file = storage.write(
                        context.spaceId(),
                        new Storage.Target(Paths.parent(path), Paths.last(path)),
                        null,
                        true,
                        new ByteArrayInputStream(content),
                        content.length,
                        null,
                        null);
                return JSON.writeValueAsString(
                        Map.of("path", file.path(), "size", file.size(), "sha256", file.sha256()));
            } catch (ApiException e) {
                throw new IOException(e.getMessage());
            }
        }
    }

    private StorageTools() {}
}
