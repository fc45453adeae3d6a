package dev.atrium.resource.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Durable workflows ({@code workflow}): instances of the class the resource's {@code class_name} names, each a run of
 * its {@code run(event, step)} whose steps' results are stored, so that a run that ends (a crash, a sleep, a retry's
 * delay) runs again from the start later with every completed step answered from the store instead of run again.
 *
 * <p>Two sides use it: the binding's calls of the code ({@link #create}, {@link #get}, {@link #control}), and the
 * engine that runs instances ({@link #claim} an instance with a lease, then, for the run, the step calls
 * {@link #beginStep}, {@link #completeStep}, {@link #failStep}, {@link #sleep}, and {@link #finish}). Every step call
 * carries the lease of the run; a call whose lease is no longer the instance's (it expired and another run took the
 * instance, or the instance was paused, terminated or restarted) gets {@link StepAnswer.Action#ABORT} and changes
 * nothing. JSON values (params, step results, output) are passed as JSON text.
 */
@ConsumerType
public interface WorkflowFacet {

    /** An instance as {@code instance.status()} shows it. */
    record Instance(
            String id, String status, String outputJson, String errorName, String errorMessage, Instant createdAt) {}

    /**
     * Creates a queued instance.
     *
     * @param runner     who may run it (the service whose code created it)
     * @param id         the id asked for, or null for a new random one
     * @param paramsJson the event's payload, JSON text, or null
     * @throws ResourceException {@code CONFLICT} when the id exists, {@code BAD_INPUT} for a malformed id or params
     */
    Instance create(ResourceContext ctx, String runner, String id, String paramsJson) throws ResourceException;

    /** The instance, or empty. */
    Optional<Instance> get(ResourceContext ctx, String id) throws ResourceException;

    /** What {@link #control} does. */
    enum Control {
        PAUSE,
        RESUME,
        TERMINATE,
        RESTART,
        DELETE
    }

    /**
     * Pauses, resumes, terminates, restarts (every step forgotten, queued again) or deletes an instance.
     *
     * @throws ResourceException {@code NOT_FOUND} for no such instance, {@code CONFLICT} when its status does not allow
     *         the action (e.g. resuming one that is not paused, terminating a finished one)
     */
    void control(ResourceContext ctx, String id, Control action) throws ResourceException;

    /** An instance claimed to run, until {@link #finish} or until its lease expires. */
    record Claim(String instanceId, String lease, String paramsJson, Instant createdAt) {}

    /**
     * Claims up to {@code max} instances of {@code runner} that are due to run (queued, or waiting and due) and held by
     * no live lease, each with a new lease of {@code lease} ({@code SELECT … FOR UPDATE SKIP LOCKED}: concurrent
     * engines never take the same one).
     */
    List<Claim> claim(ResourceContext ctx, String runner, int max, Duration lease) throws ResourceException;

    /** Extends a run's lease; false when the lease is no longer the instance's. */
    boolean renew(ResourceContext ctx, String instanceId, String lease, Duration duration) throws ResourceException;

    /** Gives up a run (its runtime could not be reached or failed): the instance is due again at once. */
    void release(ResourceContext ctx, String instanceId, String lease) throws ResourceException;

    /**
     * What a step call tells the run to do.
     *
     * @param valueJson    the stored result ({@code REPLAY})
     * @param errorName    the error to throw ({@code THROW})
     * @param attempt      the attempt to make now, from 1 ({@code RUN})
     * @param waitMillis   how long to wait in memory before asking again ({@code WAIT})
     */
    record StepAnswer(
            Action action, String valueJson, String errorName, String errorMessage, int attempt, long waitMillis) {

        /** The actions. */
        public enum Action {
            /** Return the stored result without running the step. */
            REPLAY,
            /** Throw the stored error. */
            THROW,
            /** Run the step's callback (attempt {@code attempt}). */
            RUN,
            /** Wait {@code waitMillis} in memory, then ask again (a short retry delay). */
            WAIT,
            /** End the run: it is due again later (a sleep, a long retry delay). */
            SUSPEND,
            /** End the run: the lease is no longer the instance's. */
            ABORT
        }
    }

    /** A step's retry settings, Cloudflare's defaults filled in by the caller. */
    record Retries(int limit, long delayMillis, String backoff) {}

    /**
     * Starts (or replays) {@code step.do} with the key {@code key} ({@code do:<n>:<name>}, the n-th step of that name).
     */
    StepAnswer beginStep(ResourceContext ctx, String instanceId, String lease, String key) throws ResourceException;

    /** Stores the result of the step's current attempt; answers {@code REPLAY} with the stored value, or {@code ABORT}. */
    StepAnswer completeStep(ResourceContext ctx, String instanceId, String lease, String key, String valueJson)
            throws ResourceException;

    /**
     * Records a failed attempt: the step is retried after its delay ({@code WAIT} or {@code SUSPEND}), or, past its
     * limit or when {@code retryable} is false, fails for good ({@code THROW}).
     */
    StepAnswer failStep(
            ResourceContext ctx,
            String instanceId,
            String lease,
            String key,
            String errorName,
            String errorMessage,
            boolean retryable,
            Retries retries)
            throws ResourceException;

    /**
     * {@code step.sleep} / {@code step.sleepUntil} with the key {@code sleep:<n>:<name>}: the first call stores the
     * deadline ({@code until}); the run is suspended until then ({@code SUSPEND}), and once it passed the sleep is
     * done ({@code REPLAY}).
     */
    StepAnswer sleep(ResourceContext ctx, String instanceId, String lease, String key, Instant until)
            throws ResourceException;

    /**
     * Ends a run: {@code complete} with {@code outputJson}, or {@code errored} when {@code errorName} is not null.
     *
     * @return false when the lease was no longer the instance's (nothing changed)
     */
    boolean finish(
            ResourceContext ctx,
            String instanceId,
            String lease,
            String outputJson,
            String errorName,
            String errorMessage)
            throws ResourceException;
}
