package dev.atrium.runs.api;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Starts a run on a thread for a Principal, from another capability (a reminder that fires). Registered by the runs
 * capability while it is enabled; users reference it optionally and dynamically.
 *
 * @since 1.2
 */
@ProviderType
public interface RunStarter {

    /**
     * Adds {@code input} to the thread as a user message and queues a run on it with {@code principalId} as its
     * requester, exactly as {@code POST /api/threads/:threadId/runs} does for that Principal. The runs capability
     * proves again that the Principal is active and owns the thread's workspace (the kernel's owner scope).
     *
     * @param principalId the Principal the run is for (its requester)
     * @param spaceId     the workspace the thread must be in
     * @param threadId    the thread
     * @param input       the user message, 1-100,000 characters
     * @return the new run's id
     * @throws RuntimeException the kernel's 404 when the Principal cannot reach the thread, or the thread is in
     *                          another workspace; 400 for an input out of bounds
     */
    String start(String principalId, String spaceId, String threadId, String input);

    /**
     * The status of a run {@code principalId} requested: {@code queued}, {@code running}, {@code completed},
     * {@code failed} or {@code cancelled}; empty when there is no such run or another Principal requested it. For a
     * capability that missed the run's {@link RunEvents#FINISHED} event (it was stopped) and reconciles.
     *
     * @since 1.5
     */
    Optional<String> status(String principalId, String runId);
}
