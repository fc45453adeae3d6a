package dev.atrium.skills.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the skills routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class SkillJson {

    private SkillJson() {}

    /**
     * A whole skill ({@link SkillInput}): {@code name}, {@code description} and {@code instructions} are required
     * unless {@code from_official} names an official skill that fills in what the body does not give (a PUT by name
     * takes the name from the path).
     */
    record Input(
            String name,
            String description,
            String instructions,
            List<String> tools,
            Boolean enabled,
            @JsonProperty("from_official") String fromOfficial) {}

    /** A PATCH: {@code enabled} sets it; an empty body flips it. */
    record Toggle(Boolean enabled) {}

    /** A custom skill ({@link SkillStore.Skill}); {@code source} names the official skill it was copied from. */
    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            String name,
            String description,
            String instructions,
            List<String> tools,
            boolean enabled,
            String source,
            boolean official,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(View skill) {}

    record Page(List<View> skills, long total, int limit, int offset) {}

    record Deleted(boolean success) {}

    /** An official skill ({@link SkillDocument}): its id is its name, {@code official} is true. */
    record Official(
            String id, String name, String description, String instructions, List<String> tools, boolean official) {}

    record OneOfficial(Official skill) {}

    record Officials(List<Official> skills, int total) {}

    /** What a run's system prompt gets ({@link SkillsContext}): the skills in it by name, and those left out. */
    record Context(
            String context,
            List<String> skills,
            List<String> omitted,
            boolean truncated,
            @JsonProperty("max_chars") int maxChars) {}
}
