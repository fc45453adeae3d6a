package dev.atrium.memories.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the memories routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class MemoryJson {

    private MemoryJson() {}

    /** A create or an update: the memory's text, 1 to 10,000 characters. */
    record Content(String content) {}

    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            String content,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(View memory) {}

    record Page(List<View> memories, long total, int limit, int offset) {}

    record Found(List<View> memories, String query, int limit, int offset) {}

    record Deleted(boolean success) {}
}
