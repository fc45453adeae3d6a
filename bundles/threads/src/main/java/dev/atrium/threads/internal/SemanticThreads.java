package dev.atrium.threads.internal;

import dev.atrium.search.api.SemanticSearch;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Thread search by meaning, from workspace search's index (present only while the search capability runs): the
 * threads whose title or messages are nearest to the query, best first.
 */
@Component(service = SemanticThreads.class)
public class SemanticThreads {

    private final SemanticSearch search;

    @Activate
    public SemanticThreads(@Reference SemanticSearch search) {
        this.search = search;
    }

    /**
     * @throws IllegalStateException when search has no embeddings API or it fails (the message says which)
     */
    List<String> threadIds(String spaceId, String query, int limit) {
        Set<String> ids = new LinkedHashSet<>();
        for (SemanticSearch.Hit h : search.nearest(spaceId, query, Set.of("thread", "message"), limit * 5)) {
            String id = "thread".equals(h.kind())
                    ? h.id()
                    : h.parentId() != null && h.parentId().startsWith("thread:")
                            ? h.parentId().substring(7)
                            : null;
            if (id != null) {
                ids.add(id);
            }
            if (ids.size() == limit) {
                break;
            }
        }
        return new ArrayList<>(ids);
    }
}
