package dev.atrium.sessions.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the session routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class SessionJson {

    private SessionJson() {}

    /** A start: the repository (name or id), the branch (default: the repository's), the idle timeout in seconds. */
    record Start(
            String repo,
            String branch,
            @JsonProperty("idle_timeout_s") Integer idleTimeoutSeconds) {}

    /** A stop: the commit message and, optionally, an author other than the caller. */
    record Stop(String message, Author author) {}

    record Author(String name, String email) {}

    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            @JsonProperty("repo_id") String repoId,
            String repo,
            String branch,
            String base,
            String state,
            @JsonProperty("idle_timeout_s") int idleTimeoutSeconds,
            @JsonProperty("last_heartbeat_at") Instant lastHeartbeatAt,
            @JsonProperty("expires_at") Instant expiresAt,
            String commit,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            @JsonProperty("ended_at") Instant endedAt) {}

    record One(View session) {}

    record Page(List<View> sessions, long total, int limit, int offset) {}

    record ChangedFile(String path, String change) {}

    record Changes(long added, long modified, long deleted, List<ChangedFile> files) {}

    record Health(
            String id,
            String state,
            String branch,
            String base,
            String commit,
            String head,
            @JsonProperty("expires_at") Instant expiresAt,
            @JsonProperty("last_heartbeat_at") Instant lastHeartbeatAt,
            @JsonProperty("work_tree") boolean workTree,
            Changes changes) {}

    record Commit(
            String sha,
            String message,
            @JsonProperty("author_name") String authorName,
            @JsonProperty("author_email") String authorEmail,
            Instant time) {}

    record Stopped(View session, boolean committed, Commit commit, Changes changes) {}

    record Resumed(View session, boolean moved, List<String> kept) {}

    record File(String path, long size, String sha, String type) {}

    record Files(List<File> files, int total) {}

    record Written(File file, boolean created) {}

    record Deleted(boolean deleted, String path) {}
}
