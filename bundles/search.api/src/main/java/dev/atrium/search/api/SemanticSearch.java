package dev.atrium.search.api;

import java.util.List;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Search by meaning over a workspace's index, for capabilities that offer it on their own routes. The caller has
 * proven the workspace for its caller (the kernel's owner scope); the answer holds only that workspace's items.
 */
@ProviderType
public interface SemanticSearch {

    /**
     * The items of {@code kinds} nearest to {@code query} in meaning, best first.
     *
     * @throws IllegalStateException when no embeddings endpoint is configured or it fails (the message says which)
     */
    List<Hit> nearest(String spaceId, String query, Set<String> kinds, int limit);

    /** An item found; {@code score} is the cosine similarity, -1 to 1. */
    record Hit(String kind, String id, String parentId, double score) {}
}
