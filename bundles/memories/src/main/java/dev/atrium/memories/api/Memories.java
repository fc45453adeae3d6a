package dev.atrium.memories.api;

import java.util.List;

import org.osgi.annotation.versioning.ProviderType;

/** A workspace's memories, for a caller that has already proven the workspace through {@code OwnerScope}. */
@ProviderType
public interface Memories {

    /** Full-text search (PostgreSQL web-search syntax), best match first. */
    List<Note> search(String spaceId, String query, int limit);

    /** Adds a memory; content is trimmed and must be 1–10,000 characters (400 otherwise). */
    Note add(String spaceId, String content);

    record Note(String id, String content, String createdAt) {
    }
}
