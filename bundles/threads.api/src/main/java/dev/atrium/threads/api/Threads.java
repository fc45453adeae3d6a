package dev.atrium.threads.api;

import dev.atrium.kernel.api.Caller;
import java.time.Instant;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A workspace's threads for other capabilities. Every use starts with {@link #require}, which proves the caller owns
 * the thread's workspace through the kernel's owner scope; the other methods take the {@link ThreadRef} it returned,
 * never a raw id, and refuse a reference this service did not make (404, as for a missing thread).
 */
@ProviderType
public interface Threads {

    /** The thread, when the caller owns its workspace; otherwise 404 {@code NOT_FOUND}, as for a missing id. */
    ThreadRef require(Caller caller, String threadId);

    /**
     * What a model should see of a thread, oldest first: every system message, then the newest user and assistant
     * messages that fit the thread's {@code context_window} (tokens, estimated as one per four characters; without
     * one, a server default) and {@code maxMessages}, starting with a user message. The newest message is always
     * included, however long.
     */
    List<Message> context(ThreadRef thread, int maxMessages);

    /**
     * A page of a thread's timeline in {@code (created_at, id)} order, after the position
     * {@code (afterCreatedAt, afterId)} (both null: from the start; an empty {@code afterId}: every message of that
     * instant).
     */
    List<Message> messagesAfter(ThreadRef thread, Instant afterCreatedAt, String afterId, int limit);

    /** Appends a message to a thread; role is user, assistant or system. */
    Message append(ThreadRef thread, String role, String content, String runId);

    /**
     * A thread proven by {@link #require} for one caller. Only the threads capability implements it; a reference made
     * anywhere else is refused by every method of {@link Threads}.
     */
    @ProviderType
    interface ThreadRef {
        String id();

        String spaceId();

        String title();
    }

    record Message(String id, String threadId, String role, String content, String runId, String createdAt) {}
}
