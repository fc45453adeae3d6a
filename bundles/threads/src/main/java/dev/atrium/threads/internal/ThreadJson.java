package dev.atrium.threads.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the threads routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class ThreadJson {

    private ThreadJson() {}

    /** {@link ThreadStore.Thread#toJson()}: {@code status} is {@code active} or {@code archived}. */
    record ThreadView(
            String id,
            @JsonProperty("space_id") String spaceId,
            String title,
            String locale,
            String status,
            @JsonProperty("context_window") Integer contextWindow,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record OneThread(ThreadView thread) {}

    record ThreadPage(List<ThreadView> threads, long total, int limit, int offset) {}

    /**
     * A search of the workspace's threads for {@code query}: {@code mode} {@code keyword} (full text, the default) or
     * {@code semantic} (by meaning, from workspace search's index).
     */
    record ThreadSearch(List<ThreadView> threads, String query, String mode, int limit, int offset) {}

    /**
     * A create ({@code title} required) or an update (the fields sent); {@code status} ({@code active} or
     * {@code archived}) is read by an update only; {@code context_window} is a number of tokens, 1 to 10000000.
     */
    record ThreadInput(
            String title,
            String locale,
            String status,
            @JsonProperty("context_window") Integer contextWindow) {}

    /** A message of a thread; {@code run_id} names the run that wrote it, if one did. */
    record Message(
            String id,
            @JsonProperty("thread_id") String threadId,
            String role,
            String content,
            @JsonProperty("run_id") String runId,
            @JsonProperty("created_at") Instant createdAt) {}

    record OneMessage(Message message) {}

    /** A page of the timeline, oldest first; {@code next_cursor} is null on the last page. */
    record MessagePage(
            List<Message> messages,
            @JsonProperty("next_cursor") String nextCursor,
            long total,
            int limit) {}

    record MessageSearch(List<Message> messages, String query, int limit, int offset) {}

    /** A message to add: {@code content} required, {@code role} {@code user} by default. */
    record MessageInput(String role, String content) {}

    /** A share of a thread; {@code mode} is {@code public} or {@code password}. */
    record Share(
            String id,
            @JsonProperty("thread_id") String threadId,
            @JsonProperty("token_prefix") String tokenPrefix,
            String mode,
            @JsonProperty("password_protected") boolean passwordProtected,
            @JsonProperty("expires_at") Instant expiresAt,
            @JsonProperty("revoked_at") Instant revokedAt,
            @JsonProperty("created_at") Instant createdAt) {}

    /** A new share with its token and public URL, shown only here. */
    record CreatedShare(
            String id,
            @JsonProperty("thread_id") String threadId,
            @JsonProperty("token_prefix") String tokenPrefix,
            String mode,
            @JsonProperty("password_protected") boolean passwordProtected,
            @JsonProperty("expires_at") Instant expiresAt,
            @JsonProperty("revoked_at") Instant revokedAt,
            @JsonProperty("created_at") Instant createdAt,
            String token,
            String url) {}

    record OneShare(Share share) {}

    record OneCreatedShare(CreatedShare share) {}

    record Shares(List<Share> shares) {}

    /**
     * A share to create: {@code mode} {@code public} (default) or {@code password} (with {@code password}, 8–200
     * characters); it expires at {@code expires_at} (ISO 8601 with an offset) or after {@code expires_in} seconds.
     */
    record ShareInput(
            String mode,
            String password,
            @JsonProperty("expires_at") String expiresAt,
            @JsonProperty("expires_in") Long expiresIn) {}

    record Success(boolean success) {}

    record PublicThread(
            String id,
            String title,
            @JsonProperty("created_at") Instant createdAt) {}

    record PublicMessage(
            String id,
            String role,
            String content,
            @JsonProperty("created_at") Instant createdAt) {}

    /** The share's mode and when it expires ({@code expires_at} an ISO 8601 date-time, or an empty string: never). */
    record PublicShare(
            String mode, @JsonProperty("expires_at") String expiresAt) {}

    /** A page of a shared thread's messages, oldest first; {@code next_cursor} is null on the last page. */
    record PublicPage(
            PublicThread thread,
            List<PublicMessage> messages,
            @JsonProperty("next_cursor") String nextCursor,
            PublicShare share) {}

    /** The password of a password share. */
    record ShareAccessInput(String password) {}
}
