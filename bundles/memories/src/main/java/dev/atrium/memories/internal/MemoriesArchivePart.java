package dev.atrium.memories.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Memories in a workspace archive: {@code memories/memories.jsonl}, one memory a line with its times. */
@Component(service = WorkspaceArchivePart.class)
public class MemoriesArchivePart implements WorkspaceArchivePart {

    static final String ENTRY = "memories.jsonl";

    private final MemoryStore store;

    @Activate
    public MemoriesArchivePart(@Reference MemoryStore store) {
        this.store = store;
    }

    @Override
    public String name() {
        return "memories";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines lines = out.lines(ENTRY);
        return store.each(space.id(), m -> {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("content", m.content());
            line.put("created_at", m.createdAt());
            line.put("updated_at", m.updatedAt());
            lines.add(line);
        });
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(ENTRY, line -> {
            JsonBody b = JsonBody.of(line);
            String content = b.text("content", 1, MemoryResource.MAX_CONTENT);
            Instant created = instant(b, "created_at");
            store.restore(space.id(), content, created, b.has("updated_at") ? instant(b, "updated_at") : created);
            n[0]++;
        });
        return n[0];
    }

    @Override
    public void discard(SpaceRef space) {
        store.deleteAll(space.id());
    }

    private static Instant instant(JsonBody b, String field) {
        try {
            return Instant.parse(b.requiredString(field));
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("memories: " + field + " must be an ISO-8601 instant");
        }
    }
}
