package dev.atrium.threads.api;

import java.util.List;

import org.osgi.annotation.versioning.ProviderType;

import dev.atrium.kernel.api.Caller;

/** A workspace's threads for other capabilities; every lookup by a caller goes through the kernel's owner scope. */
@ProviderType
public interface Threads {

    /** The thread, when the caller owns its workspace; otherwise 404 {@code NOT_FOUND}, as for a missing id. */
    ThreadRef require(Caller caller, String threadId);

    /**
     * The whole timeline of a thread, oldest first (the thread must have been proven by the caller of this).
     *
     * @deprecated it holds a thread of any length in memory at once: use {@link #messagesAfter} (pages) or
     *             {@link #context} (what a model should see)
     */
    @Deprecated
    List<Message> messages(String threadId);

    /**
     * What a model should see of a thread (proven by the caller of this), oldest first: every system message, then
     * the newest user and assistant messages that fit the thread's {@code context_window} (tokens, estimated as one
     * per four characters; without one, a server default) and {@code maxMessages}, starting with a user message.
     * The newest message is always included, however long.
     *
     * @since 1.1
     */
    List<Message> context(String threadId, int maxMessages);

    /**
     * A page of a thread's timeline (proven by the caller of this) in {@code (created_at, id)} order, after the
     * position {@code (afterCreatedAt, afterId)} (both null: from the start; an empty {@code afterId}: every message
     * of that instant).
     *
     * @since 1.1
     */
    List<Message> messagesAfter(String threadId, java.time.Instant afterCreatedAt, String afterId, int limit);

    /** Appends a message to a thread (proven by the caller of this); role is user, assistant or system. */
    Message append(String threadId, String role, String content, String runId);

    record ThreadRef(String id, String spaceId, String title) {
    }

    record Message(String id, String threadId, String role, String content, String runId, String createdAt) {
    }
}
