package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Event;
import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.actions.internal.workflow.Workflow;
import dev.atrium.actions.internal.workflow.WorkflowException;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Runs: made from a workflow for an event (one job row per job, and per combination of its matrix), ended when their
 * last job ends, cancelled, and run again. Each change appends its events in the transaction that makes it.
 */
@Component(service = Runs.class)
public class Runs {

    private final Sql sql;
    private final RunEvents events;
    private final WorkflowFiles files;
    private final SpaceDirectory spaces;
    private final List<Consumer<String>> cancelListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<Runnable> wakeListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Where the minutes of jobs are counted; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    @Activate
    public Runs(
            @Reference ActionStore store,
            @Reference RunEvents events,
            @Reference WorkflowFiles files,
            @Reference SpaceDirectory spaces) {
        this.sql = store.sql();
        this.events = events;
        this.files = files;
        this.spaces = spaces;
    }

    /** Who hears that the jobs of a run are to stop (the scheduler, which stops their containers). */
    void onCancel(Consumer<String> listener) {
        cancelListeners.add(listener);
    }

    /** Who hears that jobs may be ready to start. */
    void onWake(Runnable listener) {
        wakeListeners.add(listener);
    }

    /** Forgets a listener of {@link #onCancel} or {@link #onWake} (its component stopped). */
    void forget(Object listener) {
        cancelListeners.remove(listener);
        wakeListeners.remove(listener);
    }

    void wake() {
        wakeListeners.forEach(Runnable::run);
    }

    /** What made a run. */
    record Trigger(
            String event, String ref, String commitId, String actorId, boolean fromFork, Map<String, String> inputs) {}

    /**
     * A run of each workflow of {@code commitId} that {@code matches}; a workflow that does not parse makes a failed
     * run saying why (its line included), as GitHub shows one.
     */
    List<Run> trigger(Repository repo, Trigger t, java.util.function.Predicate<Workflow> matches) {
        List<Run> made = new ArrayList<>();
        for (Map.Entry<String, String> f : files.at(repo, t.commitId()).entrySet()) {
            Workflow wf;
            try {
                wf = files.parse(f.getKey(), f.getValue());
            } catch (WorkflowException e) {
                if (t.event().equals("push")) {
                    made.add(invalid(repo, f.getKey(), t, e.getMessage()));
                }
                continue;
            }
            if (matches.test(wf)) {
                try {
                    made.add(create(repo, f.getKey(), f.getValue(), wf, t));
                } catch (ApiException e) {
                    made.add(invalid(repo, f.getKey(), t, e.getMessage()));
                }
            }
        }
        if (!made.isEmpty()) {
            wake();
        }
        return made;
    }

    private Run invalid(Repository repo, String path, Trigger t, String message) {
        List<Event> out = new ArrayList<>();
        String owner = ownerOf(repo, t);
        Run run = sql.tx(c -> {
            String id = insertRun(c, repo, owner, path, path, "", t);
            Sql.update(
                    c,
                    "UPDATE action_runs SET status = 'completed', conclusion = 'failure', reason = ?, completed_at = now()"
                            + " WHERE id = ?",
                    "invalid workflow file: " + message,
                    id);
            out.add(ActionStore.append(
                    c, id, RunEvents.RUN_COMPLETED, Map.of("conclusion", "failure", "run_attempt", 1)));
            return ActionStore.run(c, id).orElseThrow();
        });
        events.committed(out);
        return run;
    }

    /**
     * A run of {@code wf}, its jobs queued.
     *
     * @throws ApiException 422 when an expression the run needs now (a name, {@code runs-on}, a concurrency group)
     *     cannot be evaluated, e.g. {@code fromJSON} of an input that is not JSON
     */
    Run create(Repository repo, String path, String text, Workflow wf, Trigger t) {
        try {
            return made(repo, path, text, wf, t);
        } catch (IllegalArgumentException e) {
            throw new ApiException(422, "INVALID_WORKFLOW", path + ": " + e.getMessage());
        }
    }

    private Run made(Repository repo, String path, String text, Workflow wf, Trigger t) {
        List<Event> out = new ArrayList<>();
        List<String> cancelled = new ArrayList<>();
        // asked before the transaction: a second connection taken while one is held starves the pool under a burst
        String owner = ownerOf(repo, t);
        Run run = sql.tx(c -> {
            out.clear();
            cancelled.clear();
            String group = null;
            boolean cancelInProgress = false;
            String name =
                    wf.name() == null || wf.name().isBlank() ? path.substring(path.lastIndexOf('/') + 1) : wf.name();
            String id = insertRun(c, repo, owner, path, name, text, t);
            Run draft = ActionStore.run(c, id).orElseThrow();
            if (wf.concurrency() != null) {
                group = Eval.text(
                        wf.concurrency().group(),
                        Map.of("github", Contexts.github(repo, draft, null), "inputs", t.inputs()));
                cancelInProgress = wf.concurrency().cancelInProgress();
                Sql.update(
                        c,
                        "UPDATE action_runs SET concurrency_group = ?, cancel_in_progress = ? WHERE id = ?",
                        group,
                        cancelInProgress,
                        id);
                if (cancelInProgress) {
                    cancelled.addAll(Sql.list(
                            c,
                            "SELECT id FROM action_runs WHERE repo_id = ? AND concurrency_group = ? AND status <> 'completed'"
                                    + " AND id <> ? ORDER BY number",
                            rs -> rs.getString(1),
                            repo.id(),
                            group,
                            id));
                }
            }
            for (Map.Entry<String, dev.atrium.actions.internal.workflow.Job> je :
                    wf.jobs().entrySet()) {
                insertJobs(c, repo, draft, je.getValue(), t.inputs());
            }
            out.add(ActionStore.append(c, id, "run.created", Map.of("number", draft.number(), "workflow", path)));
            for (String other : cancelled) {
                out.addAll(
                        cancelIn(c, other, "cancelled by run #" + draft.number() + " of concurrency group " + group));
            }
            return ActionStore.run(c, id).orElseThrow();
        });
        events.committed(out);
        cancelled.forEach(r -> cancelListeners.forEach(l -> l.accept(r)));
        return run;
    }

    /** The Principal whose caps a run counts against: the owner of the repository's workspace, as the kernel says. */
    private String ownerOf(Repository repo, Trigger t) {
        return spaces.byId(repo.spaceId()).map(SpaceRef::ownerPrincipalId).orElse(t.actorId());
    }

    private static String insertRun(
            Connection c, Repository repo, String owner, String path, String name, String text, Trigger t)
            throws SQLException {
        // numbers are dense per repository: runs of one repository are numbered one at a time
        Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('action_runs:' || ?))", repo.id());
        String id = Ids.id("run");
        Sql.update(
                c,
                "INSERT INTO action_runs (id, repo_id, number, workflow_path, name, event, ref, commit_id, actor_id,"
                        + " principal_id, from_fork, inputs, workflow, status)"
                        + " SELECT ?, ?, coalesce(max(number), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, 'queued'"
                        + " FROM action_runs WHERE repo_id = ?",
                id,
                repo.id(),
                path,
                name,
                t.event(),
                t.ref(),
                t.commitId(),
                t.actorId(),
                owner,
                t.fromFork(),
                ActionStore.json(t.inputs()),
                text,
                repo.id());
        return id;
    }

    private static void insertJobs(
            Connection c,
            Repository repo,
            Run run,
            dev.atrium.actions.internal.workflow.Job job,
            Map<String, String> inputs)
            throws SQLException {
        List<Map<String, Object>> combos =
                job.strategy() == null ? List.of() : job.strategy().matrix().expand();
        if (combos.isEmpty()) {
            combos = new ArrayList<>();
            combos.add(null);
        }
        for (Map<String, Object> matrix : combos) {
            Map<String, Object> ctx = new LinkedHashMap<>();
            ctx.put("github", Contexts.github(repo, run, job.id()));
            ctx.put("inputs", inputs);
            ctx.put("matrix", matrix == null ? Map.of() : matrix);
            String name;
            if (job.name() != null && !job.name().isBlank()) {
                name = Eval.text(job.name(), ctx);
            } else if (matrix != null && !matrix.isEmpty()) {
                List<String> values = new ArrayList<>();
                matrix.values().forEach(v -> values.add(Eval.render(v)));
                name = job.id() + " (" + String.join(", ", values) + ")";
            } else {
                name = job.id();
            }
            Sql.update(
                    c,
                    "INSERT INTO action_jobs (id, run_id, job_key, name, matrix, needs, runs_on, status)"
                            + " VALUES (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, 'queued')",
                    Ids.id("job"),
                    run.id(),
                    job.id(),
                    name,
                    matrix == null ? null : ActionStore.json(matrix),
                    ActionStore.json(job.needs()),
                    Eval.text(job.runsOn(), ctx));
        }
    }

    // ------------------------------------------------------------------------------------------- endings

    /**
     * Ends a run whose jobs have all ended, with the worst of their conclusions (a skipped job does not fail it), and
     * marks it started once one of its jobs did. Inside the caller's transaction; returns the events appended.
     */
    static List<Event> settle(Connection c, String runId) throws SQLException {
        List<Event> out = new ArrayList<>();
        Run run = ActionStore.run(c, runId).orElse(null);
        if (run == null || run.status().equals("completed")) {
            return out;
        }
        List<Job> jobs = ActionStore.jobs(c, runId);
        boolean allDone = jobs.stream().allMatch(j -> j.status().equals("completed"));
        boolean anyStarted = jobs.stream().anyMatch(j -> !j.status().equals("queued"));
        if (allDone) {
            String conclusion = "success";
            for (Job j : jobs) {
                String jc = j.conclusion() == null ? "skipped" : j.conclusion();
                if (!jc.equals("skipped")) {
                    conclusion = Contexts.worse(conclusion, jc.equals("timed_out") ? "failure" : jc);
                }
            }
            if (jobs.isEmpty() || jobs.stream().allMatch(j -> "skipped".equals(j.conclusion()))) {
                conclusion = jobs.isEmpty() ? "success" : "skipped";
            }
            Sql.update(
                    c,
                    "UPDATE action_runs SET status = 'completed', conclusion = ?, completed_at = now(),"
                            + " started_at = coalesce(started_at, now()) WHERE id = ?",
                    conclusion,
                    runId);
            out.add(ActionStore.append(
                    c, runId, RunEvents.RUN_COMPLETED, Map.of("conclusion", conclusion, "run_attempt", run.attempt())));
        } else if (anyStarted && run.status().equals("queued")) {
            Sql.update(
                    c,
                    "UPDATE action_runs SET status = 'in_progress', reason = NULL, started_at = coalesce(started_at, now())"
                            + " WHERE id = ?",
                    runId);
            out.add(ActionStore.append(c, runId, "run.started", Map.of()));
        }
        return out;
    }

    /** Ends a job (and its run when it was the last), appending the events. */
    static List<Event> endJob(Connection c, Job job, String conclusion, String reason) throws SQLException {
        List<Event> out = new ArrayList<>();
        int n = Sql.update(
                c,
                "UPDATE action_jobs SET status = 'completed', conclusion = ?, reason = coalesce(?, reason),"
                        + " completed_at = now(), instance_id = NULL WHERE id = ? AND status <> 'completed'",
                conclusion,
                reason,
                job.id());
        if (n > 0) {
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("job_id", job.id());
            data.put("name", job.name());
            data.put("conclusion", conclusion);
            if (reason != null) {
                data.put("reason", reason);
            }
            out.add(ActionStore.append(c, job.runId(), "job.completed", data));
            out.addAll(settle(c, job.runId()));
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------- cancel, rerun

    Run cancel(Run run) {
        if (run.status().equals("completed")) {
            throw ApiException.conflict("the run has completed already");
        }
        List<Event> out = sql.tx(c -> cancelIn(c, run.id(), "cancelled"));
        events.committed(out);
        cancelListeners.forEach(l -> l.accept(run.id()));
        wake();
        return sql.run(c -> ActionStore.run(c, run.id())).orElseThrow();
    }

    /** Queued jobs end cancelled now; running ones end when their runner stops them (the scheduler hears of it). */
    private static List<Event> cancelIn(Connection c, String runId, String reason) throws SQLException {
        List<Event> out = new ArrayList<>();
        ActionStore.run(c, runId); // the run's row lock: nothing starts a job of it meanwhile
        Sql.update(c, "UPDATE action_runs SET reason = ? WHERE id = ? AND status <> 'completed'", reason, runId);
        for (Job j : ActionStore.jobs(c, runId)) {
            if (j.status().equals("queued")) {
                out.addAll(endJob(c, j, "cancelled", reason));
            }
        }
        return out;
    }

    /** Runs again every job, or only those that did not succeed and what depends on them. */
    Run rerun(Run run, boolean failedOnly) {
        if (!run.status().equals("completed")) {
            throw ApiException.conflict("the run is still " + run.status().replace('_', ' ') + ": cancel it first");
        }
        if (failedOnly && "success".equals(run.conclusion())) {
            throw ApiException.conflict("no job of this run failed");
        }
        List<Event> out = new ArrayList<>();
        sql.tx(c -> {
            out.clear();
            ActionStore.run(c, run.id());
            List<Job> jobs = ActionStore.jobs(c, run.id());
            Set<String> again = new HashSet<>();
            for (Job j : jobs) {
                if (!failedOnly || !"success".equals(j.conclusion())) {
                    again.add(j.key());
                }
            }
            for (boolean grew = true; grew; ) { // what needs a job run again runs again
                grew = false;
                for (Job j : jobs) {
                    if (!again.contains(j.key()) && j.needs().stream().anyMatch(again::contains)) {
                        grew |= again.add(j.key());
                    }
                }
            }
            for (Job j : jobs) {
                if (again.contains(j.key())) {
                    Sql.update(
                            c,
                            "UPDATE action_jobs SET status = 'queued', conclusion = NULL, reason = NULL, attempt = attempt + 1,"
                                    + " outputs = '{}', steps = '[]', started_at = NULL, completed_at = NULL, log_key = NULL,"
                                    + " log_bytes = 0, seq = nextval(pg_get_serial_sequence('action_jobs', 'seq'))"
                                    + " WHERE id = ?",
                            j.id());
                }
            }
            Sql.update(
                    c,
                    "UPDATE action_runs SET status = 'queued', conclusion = NULL, reason = NULL, attempt = attempt + 1,"
                            + " completed_at = NULL WHERE id = ?",
                    run.id());
            out.add(ActionStore.append(
                    c, run.id(), "run.rerun", Map.of("jobs", again.size(), "failed_only", failedOnly)));
            return null;
        });
        events.committed(out);
        wake();
        return sql.run(c -> ActionStore.run(c, run.id())).orElseThrow();
    }

    /**
     * Counts a job attempt's minutes, rounded up, in the transaction that records its end: an attempt is counted
     * exactly when its end is.
     */
    void meterMinutes(Connection c, Repository repo, Job job) throws SQLException {
        UsageRecorder recorder = usage;
        if (recorder == null) {
            return;
        }
        Instant started = job.startedAt() == null ? Instant.now() : job.startedAt();
        long seconds =
                Math.max(0, java.time.Duration.between(started, Instant.now()).toSeconds());
        recorder.record(
                c,
                new UsageEvent(
                        repo.spaceId(),
                        Meters.ACTIONS_MINUTES,
                        repo.id(),
                        Math.max(1, (seconds + 59) / 60),
                        "actions-job:" + job.id() + ":" + job.attempt(),
                        Instant.now()));
    }
}
