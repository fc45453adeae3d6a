package dev.atrium.threads.api;

import java.util.List;

import org.osgi.annotation.versioning.ProviderType;

import dev.atrium.kernel.api.Caller;

/** A workspace's threads for other capabilities; every lookup by a caller goes through the kernel's owner scope. */
@ProviderType
public interface Threads {

    /** The thread, when the caller owns its workspace; otherwise 404 {@code NOT_FOUND}, as for a missing id. */
    ThreadRef require(Caller caller, String threadId);

    /** The whole timeline of a thread, oldest first (the thread must have been proven by the caller of this). */
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

    /** Appends a message to a thread (proven by the caller of this); role is user, assistant or system. */
    Message append(String threadId, String role, String content, String runId);

    record ThreadRef(String id, String spaceId, String title) {
    }

    record Message(String id, String threadId, String role, String content, String runId, String createdAt) {
    }
}
