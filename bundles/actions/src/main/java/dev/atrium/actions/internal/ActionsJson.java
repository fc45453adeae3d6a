package dev.atrium.actions.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.atrium.actions.internal.ActionStore.Artifact;
import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.actions.internal.ActionStore.Step;
import dev.atrium.actions.internal.ActionStore.WorkflowFile;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the Actions routes take and answer, named as GitHub's Actions API names it where it has the field. */
final class ActionsJson {

    private ActionsJson() {}

    static String iso(Instant t) {
        return t == null ? null : t.toString();
    }

    /** A workflow file of the default branch: {@code state} {@code active}, or {@code invalid} with the error. */
    record WorkflowOut(
            String path,
            String name,
            String state,
            String error,
            @JsonProperty("error_line") Integer errorLine,
            @JsonProperty("commit_id") String commitId,
            @JsonProperty("updated_at") String updatedAt,
            String content) {

        static WorkflowOut of(WorkflowFile w, boolean withContent) {
            return new WorkflowOut(
                    w.path(),
                    w.name(),
                    w.error() == null ? "active" : "invalid",
                    w.error(),
                    w.errorLine(),
                    w.commitId(),
                    iso(w.updatedAt()),
                    withContent ? w.content() : null);
        }
    }

    record WorkflowOne(WorkflowOut workflow) {}

    record WorkflowList(List<WorkflowOut> workflows) {}

    /** A new or changed workflow file, committed to the default branch; or send the YAML itself as the body. */
    record WorkflowPut(String content, String message) {}

    record Synced(List<String> synced) {}

    /**
     * A run: {@code status} queued, in_progress or completed; {@code conclusion} success, failure, cancelled, skipped
     * or timed_out once completed; {@code reason} why it waits or how it ended, when there is something to say.
     */
    record RunOut(
            String id,
            @JsonProperty("run_number") int number,
            String name,
            @JsonProperty("workflow_path") String workflowPath,
            String event,
            String ref,
            @JsonProperty("head_sha") String headSha,
            @JsonProperty("actor_id") String actorId,
            String status,
            String conclusion,
            String reason,
            @JsonProperty("run_attempt") int attempt,
            @JsonProperty("from_fork") boolean fromFork,
            Map<String, String> inputs,
            @JsonProperty("created_at") String createdAt,
            @JsonProperty("run_started_at") String startedAt,
            @JsonProperty("completed_at") String completedAt) {

        static RunOut of(Run r) {
            return new RunOut(
                    r.id(),
                    r.number(),
                    r.name(),
                    r.workflowPath(),
                    r.event(),
                    r.ref(),
                    r.commitId(),
                    r.actorId(),
                    r.status(),
                    r.conclusion(),
                    r.reason(),
                    r.attempt(),
                    r.fromFork(),
                    r.inputs(),
                    iso(r.createdAt()),
                    iso(r.startedAt()),
                    iso(r.completedAt()));
        }
    }

    record RunOne(@JsonProperty("workflow_run") RunOut run) {}

    record RunPage(@JsonProperty("workflow_runs") List<RunOut> runs, long total, int limit, int offset) {}

    /** A dispatch ({@code workflow_dispatch}): the workflow's path or file name, a branch or tag, and its inputs. */
    record RunStart(String workflow, String ref, Map<String, Object> inputs) {}

    /** Run again every job, or ({@code failed_only}) those that did not succeed and what needs them. */
    record Rerun(@JsonProperty("failed_only") Boolean failedOnly) {}

    record StepOut(
            int number,
            String name,
            String status,
            String conclusion,
            @JsonProperty("started_at") String startedAt,
            @JsonProperty("completed_at") String completedAt,
            @JsonProperty("log_offset") long logOffset) {

        static StepOut of(Step s) {
            return new StepOut(
                    s.number(),
                    s.name(),
                    s.status(),
                    s.conclusion(),
                    iso(s.started()),
                    iso(s.completed()),
                    s.logOffset());
        }
    }

    record JobOut(
            String id,
            @JsonProperty("run_id") String runId,
            String name,
            @JsonProperty("job_key") String key,
            Map<String, Object> matrix,
            List<String> needs,
            @JsonProperty("runs_on") String runsOn,
            String status,
            String conclusion,
            String reason,
            @JsonProperty("run_attempt") int attempt,
            Map<String, String> outputs,
            List<StepOut> steps,
            @JsonProperty("log_bytes") long logBytes,
            @JsonProperty("created_at") String createdAt,
            @JsonProperty("started_at") String startedAt,
            @JsonProperty("completed_at") String completedAt) {

        static JobOut of(Job j) {
            return new JobOut(
                    j.id(),
                    j.runId(),
                    j.name(),
                    j.key(),
                    j.matrix(),
                    j.needs(),
                    j.runsOn(),
                    j.status(),
                    j.conclusion(),
                    j.reason(),
                    j.attempt(),
                    j.outputs(),
                    j.steps().stream().map(StepOut::of).toList(),
                    j.logBytes(),
                    iso(j.createdAt()),
                    iso(j.startedAt()),
                    iso(j.completedAt()));
        }
    }

    record JobOne(JobOut job) {}

    record JobList(List<JobOut> jobs, long total) {}

    record ArtifactOut(
            String id,
            String name,
            @JsonProperty("size_in_bytes") long size,
            int files,
            @JsonProperty("run_id") String runId,
            @JsonProperty("created_at") String createdAt,
            @JsonProperty("expires_at") String expiresAt,
            @JsonProperty("archive_download_url") String downloadUrl) {

        static ArtifactOut of(Artifact a) {
            return new ArtifactOut(
                    a.id(),
                    a.name(),
                    a.size(),
                    a.files(),
                    a.runId(),
                    iso(a.createdAt()),
                    iso(a.expiresAt()),
                    "/api/repos/" + a.repoId() + "/actions/artifacts/" + a.id());
        }
    }

    record ArtifactList(List<ArtifactOut> artifacts, long total) {}

    record SecretOut(
            String name,
            @JsonProperty("created_at") String createdAt,
            @JsonProperty("updated_at") String updatedAt) {}

    record SecretList(List<SecretOut> secrets, long total) {}

    record SecretOne(SecretOut secret) {}

    /** What a DELETE answers. */
    record Deleted(boolean deleted) {}

    /** A secret's value: at most 48 KiB of text. It is never answered. */
    record SecretPut(String value) {}
}
