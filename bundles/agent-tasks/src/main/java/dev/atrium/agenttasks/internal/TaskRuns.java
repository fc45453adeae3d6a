package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.agenttasks.internal.AgentTaskStore.Task;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.runs.api.RunEvents;
import dev.atrium.runs.api.RunStarter;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task's run: started through runs.api's {@link RunStarter} on the task's thread, its end heard as runs'
 * {@link RunEvents#FINISHED} EventAdmin event. An end this bundle did not hear (it was stopped, or EventAdmin was) is
 * found by the reconcile, as soon as runs is there and then every {@code reconcileSeconds}, which asks runs for the status of
 * each run whose outcome the task does not know yet.
 */
@Component(
        service = {TaskRuns.class, EventHandler.class},
        property = EventConstants.EVENT_TOPIC + "=" + RunEvents.FINISHED)
public class TaskRuns implements EventHandler {

    private static final Logger LOG = LoggerFactory.getLogger(TaskRuns.class);
    /** Tasks looked at per reconcile pass. */
    static final int RECONCILE_BATCH = 200;

    static final int MAX_INPUT = 100_000;

    private final AgentTaskStore store;
    private final ObjectMapper json = JsonMappers.create();
    private final ScheduledExecutorService reconciler = NamedThreads.scheduler("atrium-agent-tasks-reconcile");

    private volatile RunStarter runs;

    @Activate
    public TaskRuns(@Reference AgentTaskStore store, @Reference AgentTasksSettings settings) {
        this.store = store;
        NamedThreads.repeat(reconciler, this::reconcile, Duration.ZERO, Duration.ofSeconds(settings.reconcileSeconds));
    }

    @Deactivate
    void deactivate() {
        reconciler.shutdownNow();
    }

    /**
     * Constructor injection sets references after the constructor, so the reconcile it started at once may have found
     * no runs capability: it looks again as soon as there is one (a run that ended while this bundle was off is
     * recorded then, not a reconcile interval later).
     */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindRuns(RunStarter starter) {
        runs = starter;
        try {
            reconciler.execute(this::reconcile);
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            // deactivated meanwhile: nothing to reconcile
        }
    }

    void unbindRuns(RunStarter starter) {
        if (runs == starter) {
            runs = null;
        }
    }

    /**
     * Starts a run for {@code task} on its thread for {@code principalId} (the caller, whom the kernel proved to own
     * the task's workspace) and links it to the task.
     *
     * @throws ApiException 409 without a thread or while the task's previous run has not ended; 503 while the runs
     *                      capability is disabled; runs' 404 when the thread is gone or no longer the creator's
     */
    Task start(Task task, String principalId) {
        RunStarter starter = runs;
        if (starter == null) {
            throw ApiException.unavailable("the runs capability is disabled");
        }
        Task linked = store.startRun(task.id(), principalId, locked -> {
                    if (locked.threadId() == null) {
                        throw ApiException.conflict(
                                "the task has no thread; set thread_id to a thread of its workspace first");
                    }
                    if (locked.runId() != null
                            && (locked.lastRunStatus() == null
                                    || !AgentTaskStore.TERMINAL_RUN.contains(locked.lastRunStatus()))) {
                        throw ApiException.conflict("the task's run " + locked.runId() + " has not ended yet");
                    }
                    try {
                        return starter.start(principalId, locked.spaceId(), locked.threadId(), input(locked));
                    } catch (ApiException e) {
                        if (e.status() == 404) {
                            throw ApiException.conflict("the task's thread no longer exists in its workspace");
                        }
                        throw e;
                    }
                })
                .orElseThrow(() -> ApiException.notFound(AgentTaskResource.NOT_FOUND));
        // the run's end, if it came before the link committed, found no task to record it on: look once now
        Optional<String> now = starter.status(principalId, linked.runId());
        if (now.isPresent() && AgentTaskStore.TERMINAL_RUN.contains(now.get())) {
            return store.recordRunStatus(linked.runId(), now.get()).orElse(linked);
        }
        return linked;
    }

    /** The run's user message: the task, and its plan when it has one. */
    String input(Task task) {
        StringBuilder sb = new StringBuilder("Carry out this task.\n\nTask: ").append(task.title());
        if (task.description() != null && !task.description().isBlank()) {
            sb.append("\n\nDescription:\n").append(task.description());
        }
        if (task.plan() != null) {
            try {
                JsonNode steps = json.readTree(task.plan()).path("steps");
                if (steps.isArray() && !steps.isEmpty()) {
                    sb.append("\n\nPlan:");
                    int n = 0;
                    for (JsonNode s : steps) {
                        sb.append("\n")
                                .append(++n)
                                .append(". ")
                                .append(s.path("title").asText());
                        String detail = s.path("detail").asText("");
                        if (!detail.isBlank()) {
                            sb.append(": ").append(detail);
                        }
                    }
                }
            } catch (IOException e) {
                LOG.warn("the plan of task {} is not JSON; the run goes without it", task.id(), e);
            }
        }
        String text = sb.toString();
        return text.length() <= MAX_INPUT ? text : text.substring(0, MAX_INPUT);
    }

    @Override
    public void handleEvent(Event event) {
        if (event.getProperty(RunEvents.RUN_ID) instanceof String runId
                && event.getProperty(RunEvents.STATUS) instanceof String status) {
            try {
                store.recordRunStatus(runId, status);
            } catch (RuntimeException e) {
                // the reconcile finds it on its next pass
                LOG.warn("recording the end of run {} on its task failed", runId, e);
            }
        }
    }

    /** Asks runs about every run whose outcome a task does not know yet. */
    void reconcile() {
        RunStarter starter = runs;
        if (starter == null) {
            return;
        }
        try {
            for (Task task : store.awaitingRuns(RECONCILE_BATCH)) {
                Optional<String> status = starter.status(task.principalId(), task.runId());
                if (status.isEmpty()) {
                    // the run is gone (its thread was deleted): the task's run ended without an outcome
                    store.recordRunStatus(task.runId(), "failed");
                } else if (!status.get().equals(task.lastRunStatus())) {
                    store.recordRunStatus(task.runId(), status.get());
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("reconciling agent tasks with their runs failed", e);
        }
    }
}
