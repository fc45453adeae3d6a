package dev.atrium.memories.internal;

import java.util.List;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.memories.api.Memories;

/** The {@link Memories} service over this bundle's store. */
@Component(service = Memories.class)
public class MemoriesService implements Memories {

    private final MemoryStore store;

    @Activate
    public MemoriesService(@Reference MemoryStore store) {
        this.store = store;
    }

    @Override
    public List<Note> search(String spaceId, String query, int limit) {
        if (query == null || query.isBlank()) {
            throw ApiException.badRequest("query is required");
        }
        return store.search(spaceId, query, Math.max(1, Math.min(limit, 100)), 0).stream()
                .map(m -> new Note(m.id(), m.content(), m.createdAt())).toList();
    }

    @Override
    public Note add(String spaceId, String content) {
        String c = content == null ? "" : content.trim();
        if (c.isEmpty() || c.codePointCount(0, c.length()) > MemoryResource.MAX_CONTENT) {
            throw ApiException.badRequest("content must be 1 to " + MemoryResource.MAX_CONTENT + " characters");
        }
        var m = store.create(spaceId, c);
        return new Note(m.id(), m.content(), m.createdAt());
    }
}
