package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.actions.internal.ActionStore.Step;
import dev.atrium.actions.internal.workflow.Workflow;
import dev.atrium.repos.api.Repository;
import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.JobContainer;
import dev.atrium.runner.api.JobRunner;
import dev.atrium.runner.api.RunnerException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One job, claimed by this instance, run to its end: a fresh container with the job's workspace, its steps one after
 * another ({@code run} steps as commands in the container, the built-in actions from this side of the workspace's
 * mount), its log kept and streamed, and its conclusion recorded. A cancel or the job's time limit stops the
 * container, which ends the step that runs.
 */
final class JobExecution implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(JobExecution.class);
    /** Where a step writes its outputs and environment, inside the container (GitHub's GITHUB_OUTPUT, GITHUB_ENV). */
    private static final String STATE = "/tmp/_atrium";

    final Job job;
    final Run run;
    private final Repository repo;
    private final dev.atrium.actions.internal.workflow.Job spec;
    private final Workflow workflow;
    private final JobScheduler scheduler;
    private final JobRunner runner;
    private final Map<String, String> secrets;
    final JobLog log;
    private final Path workspace;
    private volatile JobContainer container;
    private volatile String stopReason; // "cancelled" or "timed_out"
    private final List<Step> steps = new ArrayList<>();
    private volatile int currentStep;

    JobExecution(
            JobScheduler scheduler,
            JobRunner runner,
            Repository repo,
            Run run,
            Job job,
            Workflow workflow,
            Map<String, String> secrets,
            Path workspace,
            JobLog log) {
        this.scheduler = scheduler;
        this.runner = runner;
        this.repo = repo;
        this.run = run;
        this.job = job;
        this.workflow = workflow;
        this.spec = workflow.jobs().get(job.key());
        this.secrets = secrets;
        this.workspace = workspace;
        this.log = log;
    }

    int currentStep() {
        return currentStep;
    }

    /** Stops the job: its container first, so the step that runs ends now. */
    void stop(String why) {
        if (stopReason == null) {
            stopReason = why;
        }
        JobContainer c = container;
        if (c != null) {
            c.stop();
        }
    }

    @Override
    public void run() {
        String conclusion = "failure";
        String reason = null;
        Map<String, String> outputs = Map.of();
        ScheduledFuture<?> deadline = null;
        String limit = "";
        try {
            for (int i = 0; i < spec.steps().size(); i++) {
                steps.add(new Step(i + 1, stepName(spec.steps().get(i)), "queued", null, null, null, 0));
            }
            scheduler.saveSteps(this, steps);
            double minutes =
                    Math.min(spec.timeoutMinutes() > 0 ? spec.timeoutMinutes() : 360, scheduler.maxJobMinutes());
            limit = Eval.render(minutes);
            deadline = scheduler
                    .timer()
                    .schedule(() -> stop("timed_out"), (long) (minutes * 60_000), TimeUnit.MILLISECONDS);
            Map<String, String> env = new LinkedHashMap<>();
            Map<String, Object> ctx = context(Map.of(), "success");
            putAll(env, workflow.env(), ctx);
            putAll(env, spec.env(), ctx);
            log.note("Job " + job.name() + " on " + job.runsOn() + " (" + runner.name() + ")");
            Files.createDirectories(workspace);
            container = runner.start(new ContainerSpec(
                    job.runsOn(),
                    workspace,
                    Map.of(),
                    scheduler.memoryBytes(),
                    scheduler.cpus(),
                    0,
                    Map.of("atrium.job", job.id(), "atrium.run", run.id())));
            if (stopReason != null) {
                container.stop();
            }
            WorkspaceFiles files = new WorkspaceFiles(workspace);
            StepRunner steps = new StepRunner(this, files, env);
            String status = "success";
            for (int i = 0; i < spec.steps().size(); i++) {
                currentStep = i + 1;
                dev.atrium.actions.internal.workflow.Step step = spec.steps().get(i);
                String outcome = steps.run(i, step, status);
                if (outcome.equals("failure") && !step.continueOnError()) {
                    status = "failure";
                }
                if (stopReason != null) {
                    status = stopReason.equals("timed_out") ? "timed_out" : "cancelled";
                }
            }
            steps.saveCaches(status.equals("success"));
            outputs = steps.jobOutputs(spec.outputs(), status);
            conclusion = status.equals("timed_out") ? "timed_out" : status.equals("cancelled") ? "cancelled" : status;
            if (conclusion.equals("timed_out")) {
                reason = "the job ran past its timeout-minutes (" + limit + ")";
            }
        } catch (RunnerException e) {
            reason = log.masked(String.valueOf(e.getMessage()));
            log.note("The job's container could not be started: " + e.getMessage());
            if (scheduler.runnerUnavailable() != null) {
                conclusion = null; // the runner went away: the job waits for it again
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            conclusion = "cancelled";
            reason = "the server stopped while the job ran";
        } catch (IOException | RuntimeException e) {
            // the message may quote a secret (an expression over one that failed): masked like the log
            reason = log.masked("the job could not be run: " + e.getMessage());
            LOG.warn("job {} of run {} failed in the runner: {}", job.id(), run.id(), reason);
            log.note(reason);
        } finally {
            if (deadline != null) {
                deadline.cancel(false);
            }
            JobContainer c = container;
            if (c != null) {
                c.close();
            }
            try {
                WorkspaceFiles.delete(workspace);
            } catch (IOException e) {
                LOG.warn("the workspace of job {} was not removed: {}", job.id(), e.toString());
            }
            if (stopReason != null && conclusion != null && !conclusion.equals("timed_out")) {
                conclusion = stopReason.equals("timed_out") ? "timed_out" : "cancelled";
            }
            scheduler.finished(this, conclusion, reason, outputs);
        }
    }

    // ------------------------------------------------------------------------------------------- steps' helpers

    Run runRecord() {
        return run;
    }

    Repository repo() {
        return repo;
    }

    Workflow workflow() {
        return workflow;
    }

    dev.atrium.actions.internal.workflow.Job spec() {
        return spec;
    }

    JobContainer container() {
        return container;
    }

    JobScheduler scheduler() {
        return scheduler;
    }

    boolean stopped() {
        return stopReason != null;
    }

    Map<String, String> secrets() {
        return secrets;
    }

    void stepChanged(int index, String status, String conclusion) {
        Step s = steps.get(index);
        Instant now = Instant.now();
        steps.set(
                index,
                s.with(
                        status,
                        conclusion,
                        s.startedAt() == null && !status.equals("queued") ? now : s.started(),
                        status.equals("completed") ? now : null,
                        s.startedAt() == null ? log.size() : s.logOffset()));
        scheduler.stepChanged(this, List.copyOf(steps), index);
    }

    /** The expression contexts of this job's steps. */
    Map<String, Object> context(Map<String, Object> stepsContext, String jobStatus) {
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("github", Contexts.github(repo, run, job.key()));
        ctx.put("inputs", run.inputs());
        ctx.put("matrix", job.matrix() == null ? Map.of() : job.matrix());
        ctx.put("needs", scheduler.needsOf(job));
        ctx.put("secrets", secrets);
        ctx.put("steps", stepsContext);
        ctx.put("runner", Contexts.runner());
        ctx.put("job", Map.of("status", jobStatus));
        ctx.put("vars", Map.of());
        if (job.matrix() != null && spec.strategy() != null) {
            ctx.put(
                    "strategy",
                    Map.of(
                            "fail-fast",
                            spec.strategy().failFast(),
                            "max-parallel",
                            spec.strategy().maxParallel()));
        }
        return ctx;
    }

    static void putAll(Map<String, String> env, Map<String, String> add, Map<String, Object> ctx) {
        if (add != null) {
            add.forEach((k, v) -> env.put(k, Eval.text(v, ctx)));
        }
    }

    static String stepName(dev.atrium.actions.internal.workflow.Step s) {
        if (s.name() != null && !s.name().isBlank()) {
            return s.name();
        }
        if (s.uses() != null) {
            return "Run "
                    + switch (s.uses()) {
                        case CHECKOUT -> "actions/checkout";
                        case UPLOAD_ARTIFACT -> "actions/upload-artifact";
                        case DOWNLOAD_ARTIFACT -> "actions/download-artifact";
                        case CACHE -> "actions/cache";
                    };
        }
        String first = s.run().strip().lines().findFirst().orElse("");
        return "Run " + (first.length() > 80 ? first.substring(0, 80) + "…" : first);
    }

    /** Runs a command in the container collecting its output, for the runner's own needs (not logged). */
    String capture(List<String> command) throws RunnerException, InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        container.exec(command, Map.of(), null, (err, b, off, len) -> {
            if (!err && out.size() < 1 << 20) {
                out.write(b, off, len);
            }
        });
        return out.toString(StandardCharsets.UTF_8);
    }

    static String stateDir() {
        return STATE;
    }
}
