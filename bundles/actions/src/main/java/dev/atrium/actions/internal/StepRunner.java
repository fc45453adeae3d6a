package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Artifact;
import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.RunnerException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The steps of one job: each step's {@code if}, then a {@code run} step as a shell command in the job's container, or
 * a built-in action done from this side of the workspace's mount; the step's outputs and the environment it adds for
 * later steps ({@code GITHUB_OUTPUT}, {@code GITHUB_ENV}) are read back from the container after it.
 */
final class StepRunner {

    /**
     * Runs the script with bash the way GitHub does where the image has bash, else with the POSIX shell; the script is
     * the shell's {@code $0}-less argument, never a file of the workspace.
     */
    private static final String DEFAULT_SHELL = "if command -v bash >/dev/null 2>&1; then exec bash --noprofile --norc"
            + " -eo pipefail -c \"$1\"; else exec sh -e -c \"$1\"; fi";

    private final JobExecution job;
    private final WorkspaceFiles files;
    private final Map<String, String> env;
    private final Map<String, Object> stepsContext = new LinkedHashMap<>();
    private final List<Runnable> cacheSaves = new ArrayList<>();

    StepRunner(JobExecution job, WorkspaceFiles files, Map<String, String> env) {
        this.job = job;
        this.files = files;
        this.env = env;
    }

    /** Runs the step unless its {@code if} says otherwise; returns its outcome. */
    String run(int index, dev.atrium.actions.internal.workflow.Step step, String jobStatus)
            throws InterruptedException {
        Map<String, Object> ctx = job.context(stepsContext, jobStatus);
        ctx.put("env", env);
        if (job.stopped()) { // the container is gone: nothing more runs in it
            job.stepChanged(index, "completed", "cancelled");
            record(step, "cancelled", Map.of());
            return "cancelled";
        }
        if (!Eval.condition(step.ifExpression(), ctx, jobStatus)) {
            job.stepChanged(index, "completed", "skipped");
            record(step, "skipped", Map.of());
            return "skipped";
        }
        job.stepChanged(index, "in_progress", null);
        job.log.note("##[group]" + JobExecution.stepName(step));
        Map<String, String> outputs = new LinkedHashMap<>();
        String outcome;
        try {
            Map<String, String> stepEnv = new LinkedHashMap<>(env);
            JobExecution.putAll(stepEnv, step.env(), ctx);
            outcome = step.uses() == null
                    ? shell(step, ctx, stepEnv, outputs)
                    : frozen(() -> builtIn(step, ctx, outputs)) ? "success" : "failure";
        } catch (IOException | RunnerException | RuntimeException e) {
            job.log.note("##[error]" + e.getMessage());
            outcome = "failure";
        }
        job.log.note("##[endgroup]");
        if (job.stopped()) {
            outcome = "cancelled";
        }
        String conclusion = outcome.equals("failure") && step.continueOnError() ? "success" : outcome;
        job.stepChanged(index, "completed", outcome);
        Map<String, Object> s = record(step, outcome, outputs);
        s.put("conclusion", conclusion);
        return outcome;
    }

    private Map<String, Object> record(
            dev.atrium.actions.internal.workflow.Step step, String outcome, Map<String, String> outputs) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("outcome", outcome);
        s.put("conclusion", outcome);
        s.put("outputs", outputs);
        if (step.id() != null) {
            stepsContext.put(step.id(), s);
        }
        return s;
    }

    private String shell(
            dev.atrium.actions.internal.workflow.Step step,
            Map<String, Object> ctx,
            Map<String, String> stepEnv,
            Map<String, String> outputs)
            throws RunnerException, InterruptedException {
        String script = Eval.text(step.run(), ctx);
        String state = JobExecution.stateDir();
        stepEnv.put("GITHUB_OUTPUT", state + "/output");
        stepEnv.put("GITHUB_ENV", state + "/env");
        stepEnv.put("GITHUB_PATH", state + "/path");
        stepEnv.put("GITHUB_STEP_SUMMARY", state + "/summary");
        stepEnv.putAll(baseEnv());
        String shell = step.shell() != null ? step.shell() : defaultsShell();
        String prepare = "mkdir -p " + state + " && : > " + state + "/output && : > " + state + "/env && ";
        List<String> command = switch (shell == null ? "" : shell) {
            case "" -> List.of("sh", "-c", prepare + DEFAULT_SHELL, "sh", script);
            case "bash" ->
                List.of("sh", "-c", prepare + "exec bash --noprofile --norc -eo pipefail -c \"$1\"", "sh", script);
            case "sh" -> List.of("sh", "-c", prepare + "exec sh -e -c \"$1\"", "sh", script);
            default -> throw new IllegalArgumentException("shell " + shell + " is not supported: use bash or sh");
        };
        String dir = step.workingDirectory() != null ? step.workingDirectory() : defaultsDirectory();
        String workdir = dir == null ? null : dir.startsWith("/") ? dir : ContainerSpec.WORKSPACE + "/" + dir;
        if (step.timeoutMinutes() > 0) { // the step's own limit ends its command only, as GitHub's does
            List<String> limited = new ArrayList<>(List.of(
                    "timeout", "-s", "KILL", String.valueOf(Math.max(1, Math.round(step.timeoutMinutes() * 60)))));
            limited.addAll(command);
            command = limited;
        }
        int exit = job.container().exec(command, stepEnv, workdir, (err, b, off, len) -> job.log.write(b, off, len));
        if (job.stopped()) {
            return "cancelled";
        }
        readState(outputs);
        if (exit == 137 && step.timeoutMinutes() > 0) {
            job.log.note(
                    "##[error]The step ran past its timeout-minutes (" + Eval.render(step.timeoutMinutes()) + ").");
            return "failure";
        }
        if (exit != 0) {
            job.log.note("##[error]Process completed with exit code " + exit + ".");
            return "failure";
        }
        return "success";
    }

    private void readState(Map<String, String> outputs) throws RunnerException, InterruptedException {
        String state = JobExecution.stateDir();
        String out = job.capture(List.of(
                "sh",
                "-c",
                "cat " + state + "/output 2>/dev/null; printf '\\n\\001\\n'; cat " + state + "/env 2>/dev/null"));
        int split = out.indexOf("\n\u0001\n");
        if (split < 0) {
            return;
        }
        outputs.putAll(KeyValueFile.parse(out.substring(0, split)));
        Map<String, String> added = KeyValueFile.parse(out.substring(split + 3));
        env.putAll(added);
    }

    private Map<String, String> baseEnv() {
        Map<String, Object> g = Contexts.github(job.repo(), job.runRecord(), job.job.key());
        Map<String, String> e = new LinkedHashMap<>();
        e.put("CI", "true");
        e.put("GITHUB_ACTIONS", "true");
        e.put("ATRIUM_ACTIONS", "true");
        e.put("HOME", "/tmp");
        e.put("RUNNER_OS", "Linux");
        e.put("RUNNER_ARCH", "X64");
        e.put("RUNNER_TEMP", "/tmp");
        e.put("GITHUB_WORKSPACE", ContainerSpec.WORKSPACE);
        for (String k : List.of(
                "sha",
                "ref",
                "ref_name",
                "ref_type",
                "repository",
                "repository_id",
                "actor",
                "run_id",
                "run_number",
                "run_attempt",
                "workflow",
                "event_name",
                "job")) {
            e.put("GITHUB_" + k.toUpperCase(java.util.Locale.ROOT), String.valueOf(g.get(k)));
        }
        return e;
    }

    private String defaultsShell() {
        dev.atrium.actions.internal.workflow.Defaults d = job.spec().defaults();
        if (d != null && d.shell() != null) {
            return d.shell();
        }
        d = job.workflow().defaults();
        return d == null ? null : d.shell();
    }

    private String defaultsDirectory() {
        dev.atrium.actions.internal.workflow.Defaults d = job.spec().defaults();
        if (d != null && d.workingDirectory() != null) {
            return d.workingDirectory();
        }
        d = job.workflow().defaults();
        return d == null ? null : d.workingDirectory();
    }

    // ------------------------------------------------------------------------------------------- built-in actions

    private boolean builtIn(
            dev.atrium.actions.internal.workflow.Step step, Map<String, Object> ctx, Map<String, String> outputs)
            throws IOException {
        Map<String, String> with = new LinkedHashMap<>();
        if (step.with() != null) {
            step.with().forEach((k, v) -> with.put(k, Eval.text(v, ctx)));
        }
        Artifacts artifacts = job.scheduler().artifacts();
        switch (step.uses()) {
            case CHECKOUT -> {
                String ref = with.getOrDefault("ref", "");
                String commit = ref.isBlank()
                        ? job.runRecord().commitId()
                        : job.scheduler().resolve(job.repo(), ref);
                Path into = files.inside(with.getOrDefault("path", ""));
                int n;
                try (org.eclipse.jgit.lib.Repository db = job.scheduler().openRepository(job.repo())) {
                    n = files.checkout(db, commit, into);
                }
                job.log.note("Checked out " + commit + " (" + n + " files) into " + ContainerSpec.WORKSPACE
                        + (with.getOrDefault("path", "").isBlank() ? "" : "/" + with.get("path")));
                return true;
            }
            case UPLOAD_ARTIFACT -> {
                String name = with.getOrDefault("name", "artifact");
                if (!new SecretMask(job.secrets().values()).apply(name).equals(name)) {
                    throw new IOException("an artifact's name must not hold a secret");
                }
                Map<String, Path> found = files.collect(lines(with.getOrDefault("path", "")));
                if (found.isEmpty()) {
                    String mode = with.getOrDefault("if-no-files-found", "warn");
                    job.log.note((mode.equals("error") ? "##[error]" : "##[warning]") + "No files were found with the"
                            + " provided path: " + with.getOrDefault("path", "") + ". No artifacts will be uploaded.");
                    return !mode.equals("error");
                }
                int days = with.containsKey("retention-days")
                        ? Integer.parseInt(with.get("retention-days").strip())
                        : 0;
                Artifact a = artifacts.upload(
                        job.runRecord(),
                        job.job.id(),
                        name,
                        found,
                        days,
                        Boolean.parseBoolean(with.getOrDefault("overwrite", "false")));
                outputs.put("artifact-id", a.id());
                job.log.note("Uploaded artifact " + name + ": " + a.files() + " files, " + a.size() + " bytes ("
                        + a.id() + ")");
                return true;
            }
            case DOWNLOAD_ARTIFACT -> {
                String name = with.get("name");
                Path into = files.inside(with.getOrDefault("path", ""));
                int n = artifacts.download(
                        job.runRecord(),
                        name,
                        with.get("pattern"),
                        into,
                        files,
                        Boolean.parseBoolean(with.getOrDefault("merge-multiple", "false")));
                outputs.put(
                        "download-path",
                        ContainerSpec.WORKSPACE + "/" + files.inside("").relativize(into));
                job.log.note("Downloaded " + (name == null ? "the run's artifacts" : "artifact " + name) + ": " + n
                        + " files");
                return true;
            }
            case CACHE -> {
                String key = with.getOrDefault("key", "");
                List<String> paths = lines(with.getOrDefault("path", ""));
                String scope = Caches.scope(job.runRecord());
                List<String> scopes = new ArrayList<>(List.of(scope));
                String defaultRef = "refs/heads/" + job.repo().defaultBranch();
                if (!scopes.contains(defaultRef)) {
                    scopes.add(defaultRef);
                }
                Caches.Hit hit = job.scheduler()
                        .caches()
                        .restore(job.repo().id(), scopes, key, lines(with.getOrDefault("restore-keys", "")), files);
                outputs.put("cache-hit", String.valueOf(hit != null && hit.exact()));
                if (hit != null) {
                    outputs.put("cache-matched-key", hit.key());
                    job.log.note("Cache restored from key: " + hit.key());
                } else {
                    job.log.note("Cache not found for key: " + key);
                }
                if (hit == null || !hit.exact()) {
                    cacheSaves.add(
                            () -> job.scheduler().caches().save(job.repo().id(), scope, key, paths, files, job.log));
                }
                return true;
            }
            default -> throw new IllegalStateException("unknown built-in action " + step.uses());
        }
    }

    /** Post-job: caches that missed are saved when the job succeeded, as actions/cache does. */
    void saveCaches(boolean succeeded) {
        if (!succeeded || cacheSaves.isEmpty()) {
            return;
        }
        try {
            frozen(() -> {
                cacheSaves.forEach(Runnable::run);
                return true;
            });
        } catch (IOException | RunnerException e) {
            job.log.note("##[warning]Caches not saved: " + e.getMessage());
        }
    }

    interface WorkspaceWork {
        boolean run() throws IOException, RunnerException;
    }

    /** Runs {@code work} on the workspace while no process of the job runs. */
    private boolean frozen(WorkspaceWork work) throws IOException, RunnerException {
        job.container().pause();
        try {
            return work.run();
        } finally {
            job.container().resume();
        }
    }

    Map<String, String> jobOutputs(Map<String, String> declared, String status) {
        Map<String, String> out = new LinkedHashMap<>();
        if (declared == null || declared.isEmpty()) {
            return out;
        }
        Map<String, Object> ctx = job.context(stepsContext, status);
        ctx.put("env", env);
        SecretMask mask = new SecretMask(job.secrets().values());
        declared.forEach((k, v) -> {
            String value = Eval.text(v, ctx);
            if (mask.isEmpty() || mask.apply(value).equals(value)) {
                out.put(k, value); // an output that holds a secret is left out, as GitHub does
            }
        });
        return out;
    }

    static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        for (String l : text.split("\\R")) {
            if (!l.isBlank()) {
                out.add(l.strip());
            }
        }
        return out;
    }
}
