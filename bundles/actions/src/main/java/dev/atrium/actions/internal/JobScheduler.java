package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Event;
import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.actions.internal.ActionStore.Step;
import dev.atrium.actions.internal.workflow.Workflow;
import dev.atrium.actions.internal.workflow.WorkflowException;
import dev.atrium.blob.api.Blob;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.runner.api.JobRunner;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts queued jobs in the order they were queued, once what they need has ended, while this server runs fewer than
 * its {@code maxJobs} and their Principal fewer than {@code maxJobsPerPrincipal}; skips those whose {@code if} or
 * failed needs say so; streams running jobs' logs; and fails jobs whose server stopped without ending them (a job's
 * instance refreshes its heartbeat every few seconds; one not refreshed for {@link StaleJobs#STALE_SECONDS} is failed).
 */
@Component(service = JobScheduler.class, immediate = true)
public class JobScheduler {

    private static final Logger LOG = LoggerFactory.getLogger(JobScheduler.class);
    private static final long FLUSH_MILLIS = 100;
    private static final long HEARTBEAT_MILLIS = 5_000;

    private final ActionStore store;
    private final Sql sql;
    private final RunEvents events;
    private final RunnerLink runners;
    private final ActionsSettings settings;
    private final RepositoryRegistry repositories;
    private final Artifacts artifacts;
    private final Caches caches;
    private final Secrets secrets;
    private final WorkflowFiles files;

    final String instanceId = Ids.random("ainst_", 16);
    private final InstanceLiveness liveness;
    private final Runs runs;
    private final Runnable waker = this::wake;
    private final java.util.function.Consumer<String> canceller = this::cancelRun;
    private final StaleJobs sweeper;
    private final Map<String, JobExecution> running = new ConcurrentHashMap<>();
    private final ExecutorService jobs = Executors.newCachedThreadPool(NamedThreads.factory("atrium-actions-job"));
    private final ScheduledExecutorService timer =
            Executors.newScheduledThreadPool(2, NamedThreads.factory("atrium-actions-timer"));
    private final Thread loop;
    private final Object wake = new Object();
    private volatile boolean woken = true;
    private volatile boolean stopping;
    private static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(10);
    private long lastProbe;
    private final Map<String, Workflow> parsed =
            java.util.Collections.synchronizedMap(new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Workflow> eldest) {
                    return size() > 256;
                }
            });

    @Activate
    public JobScheduler(
            @Reference ActionStore store,
            @Reference Runs runs,
            @Reference RunEvents events,
            @Reference RunnerLink runners,
            @Reference ActionsSettings settings,
            @Reference RepositoryRegistry repositories,
            @Reference Artifacts artifacts,
            @Reference Caches caches,
            @Reference Secrets secrets,
            @Reference WorkflowFiles files,
            @Reference javax.sql.DataSource dataSource)
            throws IOException {
        this.store = store;
        this.sql = store.sql();
        this.events = events;
        this.runners = runners;
        this.settings = settings;
        this.repositories = repositories;
        this.artifacts = artifacts;
        this.caches = caches;
        this.secrets = secrets;
        this.files = files;
        this.liveness = new InstanceLiveness(dataSource, instanceId);
        liveness.hold();
        this.sweeper = new StaleJobs(sql, events, liveness, instanceId, running.keySet());
        Files.createDirectories(settings.workDirectory.resolve("work"));
        Files.createDirectories(settings.workDirectory.resolve("logs"));
        this.runs = runs;
        runs.onWake(waker);
        runs.onCancel(canceller);
        var unused = timer.scheduleWithFixedDelay(this::flushLogs, FLUSH_MILLIS, FLUSH_MILLIS, TimeUnit.MILLISECONDS);
        unused = timer.scheduleWithFixedDelay(
                sweeper::heartbeat, HEARTBEAT_MILLIS, HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS);
        unused = timer.scheduleWithFixedDelay(this::expire, 1, 60, TimeUnit.MINUTES);
        this.loop = NamedThreads.factory("atrium-actions-scheduler").newThread(this::loop);
        loop.start();
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        stopping = true;
        runs.forget(waker);
        runs.forget(canceller);
        loop.interrupt();
        running.values().forEach(e -> e.stop("cancelled"));
        jobs.shutdown();
        if (!jobs.awaitTermination(20, TimeUnit.SECONDS)) {
            jobs.shutdownNow();
            LOG.warn("jobs did not end within 20 s of Actions stopping");
        }
        timer.shutdownNow();
        loop.join(10_000);
        timer.awaitTermination(5, TimeUnit.SECONDS);
        liveness.close();
    }

    void wake() {
        synchronized (wake) {
            woken = true;
            wake.notifyAll();
        }
    }

    private void loop() {
        long lastSweep = 0;
        while (!stopping) {
            try {
                synchronized (wake) {
                    if (!woken) {
                        wake.wait(1_000);
                    }
                    woken = false;
                }
                if (System.nanoTime() - lastSweep > TimeUnit.SECONDS.toNanos(5)) {
                    sweeper.sweep();
                    lastSweep = System.nanoTime();
                }
                schedule();
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (!stopping) {
                    LOG.warn("scheduling jobs failed; trying again shortly", e);
                    sleepQuietly();
                }
            }
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------------------------------- scheduling

    private static final String READY = "SELECT j.id, r.principal_id, r.repo_id FROM action_jobs j"
            + " JOIN action_runs r ON r.id = j.run_id"
            + " WHERE j.status = 'queued' AND r.status <> 'completed'"
            + " AND NOT EXISTS (SELECT 1 FROM action_jobs d WHERE d.run_id = j.run_id AND d.status <> 'completed'"
            + "   AND d.job_key IN (SELECT jsonb_array_elements_text(j.needs)))"
            + " AND NOT EXISTS (SELECT 1 FROM action_runs o WHERE r.concurrency_group IS NOT NULL AND o.repo_id = r.repo_id"
            + "   AND o.concurrency_group = r.concurrency_group AND o.status <> 'completed' AND o.number < r.number)"
            + " ORDER BY j.seq LIMIT 50";

    private record Ready(String jobId, String principalId, String repoId) {}

    private void schedule() {
        List<Ready> ready = sql.list(READY, rs -> new Ready(rs.getString(1), rs.getString(2), rs.getString(3)));
        if (ready.isEmpty()) {
            return;
        }
        String reason = runners.unavailable();
        if (reason != null) {
            sql.update(
                    "UPDATE action_runs SET reason = ? WHERE status <> 'completed'"
                            + " AND (reason IS NULL OR (reason LIKE 'waiting for a runner:%' AND reason <> ?))",
                    "waiting for a runner: " + reason, "waiting for a runner: " + reason);
        }
        // what each Principal runs now, so that a pass over a long queue does not try, one transaction each, jobs of
        // a Principal at its cap (the claim checks the cap again, under its lock)
        Map<String, Long> busy = new java.util.HashMap<>();
        sql.list(
                        "SELECT r.principal_id, count(*) FROM action_jobs j JOIN action_runs r ON r.id = j.run_id"
                                + " WHERE j.status = 'in_progress' GROUP BY r.principal_id",
                        rs -> Map.entry(rs.getString(1), rs.getLong(2)))
                .forEach(e -> busy.put(e.getKey(), e.getValue()));
        Map<String, Optional<Repository>> repos = new java.util.HashMap<>();
        // a runner that lost its service may start it again for the next job: one job tries, every PROBE_NANOS
        boolean probe = reason != null && runners.runner() != null && System.nanoTime() - lastProbe > PROBE_NANOS;
        for (Ready r : ready) {
            if (stopping || running.size() >= settings.maxJobs) {
                return;
            }
            if (busy.getOrDefault(r.principalId(), 0L) >= settings.maxJobsPerPrincipal) {
                continue;
            }
            String blocked = probe ? null : reason;
            // read before the transaction: no second connection is taken while one is held
            Repository repo =
                    repos.computeIfAbsent(r.repoId(), repositories::byId).orElse(null);
            if (repo == null) {
                continue; // the repository is being deleted: its runs go with it
            }
            List<Event> out = new ArrayList<>();
            Claimed claimed = sql.tx(c -> {
                out.clear();
                return claim(c, r.jobId(), repo, blocked, out);
            });
            events.committed(out);
            if (claimed != null) {
                busy.merge(r.principalId(), 1L, Long::sum);
                if (probe) {
                    lastProbe = System.nanoTime();
                    probe = false;
                }
                start(claimed);
            }
        }
    }

    private record Claimed(Run run, Job job, Workflow workflow) {}

    /** Skips the job, or takes it for this instance when it may start now; null when it does not start. */
    private Claimed claim(Connection c, String jobId, Repository repo, String unavailable, List<Event> out)
            throws SQLException {
        ActionStore.lockRunOf(c, jobId);
        if (Sql.one(
                        c,
                        "SELECT id FROM action_jobs WHERE id = ? AND status = 'queued' FOR UPDATE SKIP LOCKED",
                        rs -> rs.getString(1),
                        jobId)
                .isEmpty()) {
            return null;
        }
        Job job = ActionStore.job(c, jobId).orElseThrow();
        Run run = ActionStore.run(c, job.runId()).orElseThrow();
        Workflow wf = workflowOf(run);
        dev.atrium.actions.internal.workflow.Job spec =
                wf == null ? null : wf.jobs().get(job.key());
        if (spec == null) {
            out.addAll(Runs.endJob(c, job, "failure", "the run's workflow no longer has job " + job.key()));
            return null;
        }
        List<Job> all = ActionStore.jobs(c, run.id());
        Map<String, Object> needs = Contexts.needs(all, job.needs());
        boolean needsOk = needs.values().stream().allMatch(n -> "success".equals(((Map<?, ?>) n).get("result")));
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("github", Contexts.github(repo, run, job.key()));
        ctx.put("inputs", run.inputs());
        ctx.put("needs", needs);
        ctx.put("matrix", job.matrix() == null ? Map.of() : job.matrix());
        ctx.put("vars", Map.of());
        boolean go = spec.ifExpression() == null
                ? needsOk
                : Eval.condition(spec.ifExpression(), ctx, needsOk ? "success" : "failure");
        if (!go) {
            out.addAll(Runs.endJob(c, job, "skipped", needsOk ? null : "a job it needs did not succeed"));
            return null;
        }
        if (unavailable != null) {
            return null;
        }
        long principalRunning = Sql.count(
                c,
                "SELECT count(*) FROM action_jobs x JOIN action_runs xr ON xr.id = x.run_id"
                        + " WHERE x.status = 'in_progress' AND xr.principal_id = ?",
                run.principalId());
        if (principalRunning >= settings.maxJobsPerPrincipal) {
            return null;
        }
        if (spec.strategy() != null && spec.strategy().maxParallel() > 0) {
            long siblings = all.stream()
                    .filter(j -> j.key().equals(job.key()) && j.status().equals("in_progress"))
                    .count();
            if (siblings >= spec.strategy().maxParallel()) {
                return null;
            }
        }
        Sql.update(
                c,
                "UPDATE action_jobs SET status = 'in_progress', started_at = now(), instance_id = ?, heartbeat_at = now()"
                        + " WHERE id = ?",
                instanceId,
                job.id());
        out.add(ActionStore.append(c, run.id(), "job.started", Map.of("job_id", job.id(), "name", job.name())));
        out.addAll(Runs.settle(c, run.id()));
        return new Claimed(
                ActionStore.run(c, run.id()).orElseThrow(),
                ActionStore.job(c, job.id()).orElseThrow(),
                wf);
    }

    private void start(Claimed claimed) {
        JobRunner runner = runners.runner();
        Run run = claimed.run();
        try {
            Repository repo = repositoryOf(run);
            Map<String, String> values = run.fromFork() ? Map.of() : secrets.open(run.repoId());
            Path workspace =
                    settings.workDirectory.resolve("work").resolve(claimed.job().id());
            JobLog log = new JobLog(
                    settings.workDirectory.resolve("logs").resolve(claimed.job().id() + ".log"),
                    new SecretMask(values.values()),
                    settings.maxLogBytes);
            JobExecution e = new JobExecution(
                    this, runner, repo, run, claimed.job(), claimed.workflow(), values, workspace, log);
            running.put(claimed.job().id(), e);
            jobs.execute(e);
        } catch (IOException | RuntimeException e) {
            LOG.warn("job {} could not be started", claimed.job().id(), e);
            List<Event> out = sql.tx(c -> {
                ActionStore.lockRunOf(c, claimed.job().id());
                return Runs.endJob(c, claimed.job(), "failure", "the job could not be started: " + e);
            });
            events.committed(out);
        }
    }

    Workflow workflowOf(Run run) {
        return parsed.computeIfAbsent(run.id() + "@" + run.attempt(), k -> {
            try {
                // its labels were checked when the run was made; a runner restarting now must not fail it
                return files.parseAnyLabel(run.workflowPath(), run.workflow());
            } catch (WorkflowException e) {
                return null;
            }
        });
    }

    private Repository repositoryOf(Run run) {
        return repositories
                .byId(run.repoId())
                .orElseThrow(() -> new IllegalStateException("the repository of run " + run.id() + " is gone"));
    }

    // ------------------------------------------------------------------------------------------- a job's life

    void saveSteps(JobExecution e, List<Step> steps) {
        sql.tx(c -> {
            ActionStore.saveSteps(c, e.job.id(), steps);
            return null;
        });
    }

    void stepChanged(JobExecution e, List<Step> steps, int index) {
        flush(e, false);
        Step s = steps.get(index);
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("job_id", e.job.id());
        data.put("step", s.number());
        data.put("name", s.name());
        data.put("status", s.status());
        if (s.conclusion() != null) {
            data.put("conclusion", s.conclusion());
        }
        Event ev = sql.tx(c -> {
            ActionStore.lockRunOf(c, e.job.id());
            ActionStore.saveSteps(c, e.job.id(), steps);
            return ActionStore.append(
                    c, e.run.id(), "step." + (s.status().equals("completed") ? "completed" : "started"), data);
        });
        events.committed(List.of(ev));
    }

    /** A job ended here: its log to the BlobStore, its conclusion recorded (or, without one, queued again). */
    void finished(JobExecution e, String conclusion, String reason, Map<String, String> outputs) {
        for (int attempt = 1; ; attempt++) {
            try {
                record(e, conclusion, reason, outputs);
                return;
            } catch (RuntimeException ex) {
                if (attempt == 5 || stopping) {
                    running.remove(e.job.id());
                    LOG.error("the end of job {} could not be recorded; the stale sweep ends it", e.job.id(), ex);
                    return;
                }
                LOG.warn("recording the end of job {} failed ({}); trying again", e.job.id(), ex.toString());
                sleepQuietly();
            }
        }
    }

    private void record(JobExecution e, String conclusion, String reason, Map<String, String> outputs) {
        running.remove(e.job.id());
        if (conclusion == null) {
            requeue(e, reason);
            return;
        }
        flush(e, true);
        String logKey = null;
        long size = e.log.size();
        try {
            e.log.close();
            try (InputStream in = Files.newInputStream(e.log.file())) {
                Blob b = artifacts.blobs().put(Artifacts.namespace(e.run.repoId()), in, Long.MAX_VALUE);
                logKey = b.key();
            }
            Files.deleteIfExists(e.log.file());
        } catch (IOException ex) {
            LOG.warn("the log of job {} was not stored: {}", e.job.id(), ex.toString());
        }
        String key = logKey;
        List<String> cancelSiblings = new ArrayList<>();
        List<Event> out = sql.tx(c -> {
            List<Event> ev = new ArrayList<>();
            cancelSiblings.clear();
            ActionStore.lockRunOf(c, e.job.id());
            // the job is still this execution's: not ended meanwhile by the stale sweep (this instance's lock lost
            // with its database connection), then run again
            int mine = Sql.update(
                    c,
                    "UPDATE action_jobs SET log_key = ?, log_bytes = ?, outputs = ?::jsonb WHERE id = ? AND attempt = ?"
                            + " AND status = 'in_progress' AND instance_id = ?",
                    key,
                    size,
                    ActionStore.json(outputs),
                    e.job.id(),
                    e.job.attempt(),
                    instanceId);
            if (mine == 0) {
                LOG.info(
                        "job {} (attempt {}) ended here after it was ended elsewhere; its end is not recorded",
                        e.job.id(),
                        e.job.attempt());
                return ev;
            }
            ev.addAll(Runs.endJob(c, e.job, conclusion, reason));
            runs.meterMinutes(c, e.repo(), e.job);
            dev.atrium.actions.internal.workflow.Strategy strategy = e.spec().strategy();
            if (conclusion.equals("failure") && strategy != null && strategy.failFast() && e.job.matrix() != null) {
                for (Job sibling : ActionStore.jobs(c, e.run.id())) {
                    if (sibling.key().equals(e.job.key()) && !sibling.status().equals("completed")) {
                        if (sibling.status().equals("queued")) {
                            ev.addAll(Runs.endJob(c, sibling, "cancelled", "fail-fast: " + e.job.name() + " failed"));
                        } else {
                            cancelSiblings.add(sibling.id());
                        }
                    }
                }
            }
            return ev;
        });
        events.committed(out);
        cancelSiblings.forEach(id -> {
            JobExecution s = running.get(id);
            if (s != null) {
                s.stop("cancelled");
            }
        });
        wake();
    }

    /** The runner could not start the job's container and is unavailable: the job waits for it again. */
    private void requeue(JobExecution e, String reason) {
        try {
            e.log.close();
            Files.deleteIfExists(e.log.file());
        } catch (IOException ex) {
            LOG.debug("the log of requeued job {}: {}", e.job.id(), ex.toString());
        }
        List<Event> out = sql.tx(c -> {
            ActionStore.lockRunOf(c, e.job.id());
            Sql.update(
                    c,
                    "UPDATE action_jobs SET status = 'queued', instance_id = NULL, started_at = NULL, steps = '[]'"
                            + " WHERE id = ? AND status = 'in_progress'",
                    e.job.id());
            Sql.update(
                    c,
                    "UPDATE action_runs SET reason = ?, status = CASE WHEN NOT EXISTS (SELECT 1 FROM action_jobs"
                            + " WHERE run_id = ? AND status <> 'queued') THEN 'queued' ELSE status END WHERE id = ?",
                    "waiting for a runner: " + reason,
                    e.run.id(),
                    e.run.id());
            return List.of(ActionStore.append(
                    c, e.run.id(), "job.queued", Map.of("job_id", e.job.id(), "reason", String.valueOf(reason))));
        });
        events.committed(out);
    }

    private void cancelRun(String runId) {
        for (JobExecution e : running.values()) {
            if (e.run.id().equals(runId)) {
                e.stop("cancelled");
            }
        }
    }

    private void flushLogs() {
        for (JobExecution e : running.values()) {
            try {
                flush(e, false);
            } catch (RuntimeException ex) {
                LOG.debug("a log chunk of job {} was not streamed: {}", e.job.id(), ex.toString());
            }
        }
    }

    /** Streams what the job's log has new; one job's chunks go out one at a time, in order. */
    private void flush(JobExecution e, boolean all) {
        synchronized (e.log) {
            String chunk = e.log.drain(all);
            if (chunk.isEmpty()) {
                return;
            }
            Map<String, Object> data = Map.of("job_id", e.job.id(), "step", e.currentStep(), "text", chunk);
            Event ev = sql.tx(c -> ActionStore.append(c, e.run.id(), "log", data));
            events.committed(List.of(ev));
        }
    }

    private void expire() {
        try {
            artifacts.expire();
        } catch (RuntimeException e) {
            LOG.warn("expired artifacts were not all deleted", e);
        }
    }

    // ------------------------------------------------------------------------------------------- for executions

    Map<String, Object> needsOf(Job job) {
        return Contexts.needs(store.jobs(job.runId()), job.needs());
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    int maxJobMinutes() {
        return settings.maxJobMinutes;
    }

    long memoryBytes() {
        return settings.jobMemoryBytes;
    }

    double cpus() {
        return settings.jobCpus;
    }

    String runnerUnavailable() {
        return runners.unavailable();
    }

    Artifacts artifacts() {
        return artifacts;
    }

    Caches caches() {
        return caches;
    }

    String resolve(Repository repo, String ref) {
        return repositories.resolveCommit(repo, ref);
    }

    org.eclipse.jgit.lib.Repository openRepository(Repository repo) throws IOException {
        return files.open(repo);
    }

    /** The log of a job running here, as far as it is written; empty when it does not run here. */
    Optional<Path> liveLog(String jobId) {
        JobExecution e = running.get(jobId);
        return e == null ? Optional.empty() : Optional.of(e.log.file());
    }
}
