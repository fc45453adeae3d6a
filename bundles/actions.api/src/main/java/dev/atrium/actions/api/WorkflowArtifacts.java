package dev.atrium.actions.api;

import dev.atrium.kernel.api.Caller;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The artifacts of workflow runs, for a capability that deploys what a workflow built (the app platform): the newest
 * one a successful run made at a commit, or a run started for it and awaited. Repository ids passed in are ones the
 * caller's bundle found readable for its caller through {@code RepositoryRegistry}.
 *
 * @since 1.0
 */
@ProviderType
public interface WorkflowArtifacts {

    /**
     * An artifact of a successful run.
     *
     * @param workflowPath the workflow's path in the repository, e.g. {@code .atrium/workflows/build.yml}
     * @param jobName      the name (id) of the job that uploaded it
     */
    record Artifact(
            String id,
            String runId,
            String repositoryId,
            String workflowPath,
            String commitSha,
            String jobName,
            String name,
            long size,
            Instant createdAt) {}

    /** Why no artifact came: the run failed or was cancelled, it did not upload that artifact, or it took too long. */
    final class BuildFailed extends Exception {
        private static final long serialVersionUID = 1L;
        private final String runId;

        public BuildFailed(String runId, String message) {
            super(message);
            this.runId = runId;
        }

        /** The run that was started, or null when none could be. */
        public String runId() {
            return runId;
        }
    }

    /**
     * The newest artifact named {@code name} that a successful run of the workflow at {@code workflowPath} made at
     * {@code commitSha}, uploaded by the job {@code job} (any job when null). Expired artifacts are not found.
     *
     * @param commitSha the commit's full id (40 hex digits)
     * @throws dev.atrium.kernel.api.ApiException 400 when {@code commitSha} is not a full commit id or
     *                                            {@code workflowPath} is not a workflow file's path
     */
    Optional<Artifact> newest(String repositoryId, String workflowPath, String commitSha, String job, String name);

    /**
     * Runs the workflow at {@code commitSha} (the event is {@code workflow_dispatch} on {@code ref}, so the workflow
     * must take it) for {@code caller}, waits for the run to finish, at most {@code timeout}, and returns the
     * artifact. The caller must own the repository (as for starting a run over HTTP); the run is at {@code commitSha}
     * even when {@code ref} has moved past it, and one that outlasts {@code timeout} goes on (its artifact is found by
     * {@link #newest} once it succeeds).
     *
     * @param ref       a branch or tag ({@code main}, {@code refs/heads/main}); the default branch when null
     * @param commitSha the commit's full id; a commit reachable from one of the repository's refs
     * @throws BuildFailed when the workflow cannot be run there, the run does not succeed in time, or it made no such
     *                     artifact; the message is for the client and names the run
     */
    Artifact build(
            Caller caller,
            String repositoryId,
            String workflowPath,
            String ref,
            String commitSha,
            String job,
            String name,
            Duration timeout)
            throws BuildFailed;

    /**
     * The bytes of one file of an artifact.
     *
     * @param path     the file's path inside the artifact, as {@code actions/upload-artifact} stored it: relative to
     *                 the directory it was given ({@code path: dist} stores {@code dist/worker.js} as
     *                 {@code worker.js}), a single file by its name; null or empty when the artifact holds exactly
     *                 one file
     * @param maxBytes larger files are refused
     * @throws IOException when there is no such file (the message names the files there are) or it is too large
     */
    byte[] read(Artifact artifact, String path, long maxBytes) throws IOException;
}
