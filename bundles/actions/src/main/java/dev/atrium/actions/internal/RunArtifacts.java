package dev.atrium.actions.internal;

import dev.atrium.actions.api.WorkflowArtifacts;
import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * The artifacts of successful runs at a commit, for capabilities that deploy what a workflow built, and a dispatched
 * run awaited for one. A wait wakes when the run's end commits on this instance ({@link RunEvents#onRunEnded}); a run
 * whose last job ran on another instance ends there, so a waiter also looks at its run every {@link #RECHECK}.
 */
@Component(service = WorkflowArtifacts.class)
public class RunArtifacts implements WorkflowArtifacts {

    static final Duration RECHECK = Duration.ofSeconds(2);
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
    private static final Set<String> UNSUCCESSFUL = Set.of("failure", "timed_out", "cancelled");
    private static final String FOUND = "SELECT a.id, a.run_id, a.repo_id, r.workflow_path, r.commit_id, j.job_key,"
            + " a.name, a.size, a.created_at FROM action_artifacts a JOIN action_runs r ON r.id = a.run_id"
            + " LEFT JOIN action_jobs j ON j.id = a.job_id";

    private final ActionStore store;
    private final Sql sql;
    private final Artifacts artifacts;
    private final RunTriggers triggers;
    private final RunEvents events;
    private final RepositoryRegistry repositories;
    /** Each waiting build: the run it waits for, and what wakes it. */
    private final Map<Semaphore, String> waiting = new ConcurrentHashMap<>();

    private final Consumer<String> ended = this::ended;
    private volatile boolean stopped;

    @Activate
    public RunArtifacts(
            @Reference ActionStore store,
            @Reference Artifacts artifacts,
            @Reference RunTriggers triggers,
            @Reference RunEvents events,
            @Reference RepositoryRegistry repositories) {
        this.store = store;
        this.sql = store.sql();
        this.artifacts = artifacts;
        this.triggers = triggers;
        this.events = events;
        this.repositories = repositories;
        events.onRunEnded(ended);
    }

    /** Builds still waiting end now, saying Actions stopped; their runs go on. */
    @Deactivate
    void deactivate() {
        stopped = true;
        events.forget(ended);
        waiting.keySet().forEach(Semaphore::release);
    }

    private void ended(String runId) {
        waiting.forEach((signal, run) -> {
            if (run.equals(runId)) {
                signal.release();
            }
        });
    }

    @Override
    public Optional<Artifact> newest(
            String repositoryId, String workflowPath, String commitSha, String job, String name) {
        String path = WorkflowFiles.normalize(workflowPath);
        String commit = commit(commitSha);
        return sql.one(
                // never a fork's pull request run: its workflow is the fork's, and may build something else at the
                // same commit than the repository's own workflow would
                FOUND + " WHERE r.repo_id = ? AND r.workflow_path = ? AND r.commit_id = ? AND r.status = 'completed'"
                        + " AND r.conclusion = 'success' AND NOT r.from_fork AND a.name = ? AND a.expires_at > now()"
                        + " AND (?::text IS NULL OR j.job_key = ?) ORDER BY a.created_at DESC, r.number DESC LIMIT 1",
                RunArtifacts::artifact,
                repositoryId,
                path,
                commit,
                name,
                job,
                job);
    }

    @Override
    public Artifact build(
            Caller caller,
            String repositoryId,
            String workflowPath,
            String ref,
            String commitSha,
            String job,
            String name,
            Duration timeout)
            throws BuildFailed {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("a build's timeout is a duration of zero or more");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Run run;
        try {
            String commit = commit(commitSha);
            String path = WorkflowFiles.normalize(workflowPath);
            Repository repo = repositories.writable(caller, repositoryId);
            String on = ref == null || ref.isBlank() ? repo.defaultBranch() : ref;
            run = triggers.dispatch(caller, repo, path, on, commit, Map.of());
        } catch (ApiException e) {
            throw new BuildFailed(
                    null, "the workflow " + workflowPath + " was not run at " + commitSha + ": " + e.getMessage());
        }
        String label = "run #" + run.number() + " (" + run.id() + ") of " + run.workflowPath();
        Run end = await(run, label, timeout, deadline);
        if (!"success".equals(end.conclusion())) {
            throw new BuildFailed(run.id(), label + why(end));
        }
        Optional<Artifact> artifact = sql.one(
                FOUND + " WHERE a.run_id = ? AND a.name = ? AND a.expires_at > now()",
                RunArtifacts::artifact,
                run.id(),
                name);
        if (artifact.isEmpty()) {
            List<String> made = sql.list(
                    "SELECT a.name || coalesce(' (job ' || j.job_key || ')', '') FROM action_artifacts a"
                            + " LEFT JOIN action_jobs j ON j.id = a.job_id WHERE a.run_id = ? AND a.expires_at > now()"
                            + " ORDER BY a.name",
                    rs -> rs.getString(1),
                    run.id());
            throw new BuildFailed(
                    run.id(),
                    label + " succeeded but made no artifact named " + name + "; "
                            + (made.isEmpty()
                                    ? "it made none (a job uploads one with actions/upload-artifact)"
                                    : "it made " + String.join(", ", made)));
        }
        if (job != null && !job.equals(artifact.get().jobName())) {
            throw new BuildFailed(
                    run.id(),
                    label + " made the artifact " + name + " in the job "
                            + artifact.get().jobName() + ", not in " + job);
        }
        return artifact.get();
    }

    /** The run once it completed; a failure naming it when time ran out or Actions stopped first. */
    private Run await(Run run, String label, Duration timeout, long deadline) throws BuildFailed {
        Semaphore signal = new Semaphore(0);
        waiting.put(signal, run.id());
        try {
            while (true) {
                if (stopped) { // the store may be stopping too: not asked again
                    throw new BuildFailed(run.id(), "Actions stopped while " + label + " was awaited; it goes on");
                }
                Run now = store.run(run.id())
                        .orElseThrow(() -> new BuildFailed(run.id(), label + " was deleted while it was awaited"));
                if (now.status().equals("completed")) {
                    return now;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new BuildFailed(
                            run.id(),
                            label + " did not finish within " + seconds(timeout)
                                    + " (it is " + now.status().replace('_', ' ')
                                    + (now.reason() == null ? "" : ": " + now.reason())
                                    + "); it goes on, and its artifact"
                                    + " is found once it succeeds");
                }
                var unused = signal.tryAcquire(Math.min(left, RECHECK.toNanos()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BuildFailed(run.id(), "waiting for " + label + " was interrupted; the run goes on");
        } finally {
            waiting.remove(signal);
        }
    }

    private static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }

    /** Why a completed run did not succeed, after its label: its failed jobs (and their failed steps), or its reason. */
    private String why(Run run) {
        String reason = run.reason() == null ? "" : ": " + run.reason();
        if ("cancelled".equals(run.conclusion())) {
            return " was cancelled" + reason;
        }
        if ("skipped".equals(run.conclusion())) {
            return " ran no job: each was skipped by its if";
        }
        List<String> failed = new ArrayList<>();
        for (Job j : store.jobs(run.id())) {
            String c = String.valueOf(j.conclusion());
            if (UNSUCCESSFUL.contains(c)) {
                failed.add("the job " + j.name() + (c.equals("timed_out") ? " timed out" : " " + verb(c))
                        + failedStep(j) + (j.reason() == null ? "" : " (" + j.reason() + ")"));
            }
        }
        return failed.isEmpty()
                ? " ended " + run.conclusion() + reason
                : " ended " + run.conclusion() + ": " + String.join("; ", failed);
    }

    private static String verb(String conclusion) {
        return conclusion.equals("failure") ? "failed" : "was " + conclusion;
    }

    private static String failedStep(Job j) {
        return j.steps().stream()
                .filter(s -> "failure".equals(s.conclusion()))
                .findFirst()
                .map(s -> " at the step '" + s.name() + "'")
                .orElse("");
    }

    @Override
    public byte[] read(Artifact artifact, String path, long maxBytes) throws IOException {
        ActionStore.Artifact a = store.artifact(artifact.repositoryId(), artifact.id())
                .orElseThrow(() -> new IOException("the artifact " + artifact.name() + " of run " + artifact.runId()
                        + " is gone (it expired or was deleted)"));
        try (InputStream in = artifacts.blobs().open(a.blobKey())) {
            return ArtifactZip.read(in, path, maxBytes);
        }
    }

    /** A commit as runs record it: its full id. */
    private static String commit(String sha) {
        String c = sha == null ? "" : sha.strip().toLowerCase(java.util.Locale.ROOT);
        if (!COMMIT.matcher(c).matches()) {
            throw ApiException.badRequest("a commit is named by its full id (40 hex digits): " + sha);
        }
        return c;
    }

    private static Artifact artifact(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new Artifact(
                rs.getString("id"),
                rs.getString("run_id"),
                rs.getString("repo_id"),
                rs.getString("workflow_path"),
                rs.getString("commit_id"),
                rs.getString("job_key"),
                rs.getString("name"),
                rs.getLong("size"),
                Sql.instant(rs, "created_at"));
    }
}
