package dev.atrium.actions.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.actions.internal.ActionStore.Artifact;
import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.actions.internal.ActionsJson.ArtifactList;
import dev.atrium.actions.internal.ActionsJson.ArtifactOut;
import dev.atrium.actions.internal.ActionsJson.JobList;
import dev.atrium.actions.internal.ActionsJson.JobOne;
import dev.atrium.actions.internal.ActionsJson.JobOut;
import dev.atrium.actions.internal.ActionsJson.RunOne;
import dev.atrium.actions.internal.ActionsJson.RunOut;
import dev.atrium.actions.internal.ActionsJson.SecretList;
import dev.atrium.actions.internal.ActionsJson.SecretOut;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/repos/:repoId/actions}: runs, jobs, logs, artifacts and secrets. Whoever may read the repository reads
 * its runs, jobs, logs and artifacts (as GitHub shows a public repository's); its owner starts, cancels and reruns
 * runs, deletes artifacts, and alone sees and sets the names of secrets. Values of secrets are never answered.
 */
@Component(service = ActionsResource.class)
@KernelResource
@Path("/api/repos/{repoId}/actions")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ActionsResource {

    static final String READ = "repos:read";
    static final String WRITE = "repos:write";
    private static final Set<String> STATUSES =
            Set.of("queued", "in_progress", "completed", "success", "failure", "cancelled", "skipped", "timed_out");
    private static final long MAX_LOG_READ = 8L * 1024 * 1024;

    private final RepositoryRegistry repositories;
    private final ActionStore store;
    private final Runs runs;
    private final RunTriggers triggers;
    private final Artifacts artifacts;
    private final Secrets secrets;
    private final JobScheduler scheduler;

    @Activate
    public ActionsResource(
            @Reference RepositoryRegistry repositories,
            @Reference ActionStore store,
            @Reference Runs runs,
            @Reference RunTriggers triggers,
            @Reference Artifacts artifacts,
            @Reference Secrets secrets,
            @Reference JobScheduler scheduler) {
        this.repositories = repositories;
        this.store = store;
        this.runs = runs;
        this.triggers = triggers;
        this.artifacts = artifacts;
        this.secrets = secrets;
        this.scheduler = scheduler;
    }

    // ------------------------------------------------------------------------------------------- runs

    @GET
    @Path("runs")
    @RequiresScope(READ)
    @JsonShape(ActionsJson.RunPage.class)
    public Map<String, Object> listRuns(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @QueryParam("status") String status,
            @QueryParam("event") String event,
            @QueryParam("branch") String branch,
            @QueryParam("workflow") String workflow,
            @QueryParam("actor") String actor,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        repositories.readable(Caller.from(sc), repoId);
        PageRequest page = PageRequest.of(limit, offset);
        if (status != null && !STATUSES.contains(status)) {
            throw ApiException.badRequest(
                    "status must be one of " + String.join(", ", new java.util.TreeSet<>(STATUSES)));
        }
        ActionStore.RunFilter f = new ActionStore.RunFilter(
                status, event, branch, workflow == null ? null : WorkflowFiles.normalize(workflow), actor);
        return page.body(
                "workflow_runs",
                store.runs(repoId, f, page.limit(), page.offset()).stream()
                        .map(RunOut::of)
                        .toList(),
                store.countRuns(repoId, f));
    }

    /** Starts a run of a workflow that has {@code workflow_dispatch}, at a branch or tag (the default branch). */
    @POST
    @Path("runs")
    @RequiresScope(WRITE)
    @JsonShape(RunOne.class)
    public Response start(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(ActionsJson.RunStart.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository repo = repositories.writable(caller, repoId);
        NulText.reject(json);
        JsonBody b = JsonBody.of(json);
        String workflow = WorkflowFiles.normalize(b.text("workflow", 1, 1024));
        String ref = b.optionalText("ref", 1, 1024).orElse(repo.defaultBranch());
        JsonNode inputs = json.get("inputs");
        if (inputs != null && !inputs.isNull() && !inputs.isObject()) {
            throw ApiException.badRequest("inputs must be an object");
        }
        Map<String, String> given = new java.util.LinkedHashMap<>();
        if (inputs != null && inputs.isObject()) {
            inputs.fields()
                    .forEachRemaining(e -> given.put(
                            e.getKey(),
                            e.getValue().isTextual()
                                    ? e.getValue().asText()
                                    : e.getValue().toString()));
        }
        Run run = triggers.dispatch(caller, repo, workflow, ref, given);
        return Response.status(201).entity(new RunOne(RunOut.of(run))).build();
    }

    @GET
    @Path("runs/{actionRunId}")
    @RequiresScope(READ)
    public RunOne getRun(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("actionRunId") String runId) {
        repositories.readable(Caller.from(sc), repoId);
        return new RunOne(RunOut.of(run(repoId, runId)));
    }

    @GET
    @Path("runs/{actionRunId}/jobs")
    @RequiresScope(READ)
    public JobList jobs(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("actionRunId") String runId) {
        repositories.readable(Caller.from(sc), repoId);
        var list = store.jobs(run(repoId, runId).id()).stream().map(JobOut::of).toList();
        return new JobList(list, list.size());
    }

    @GET
    @Path("runs/{actionRunId}/artifacts")
    @RequiresScope(READ)
    public ArtifactList runArtifacts(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("actionRunId") String runId) {
        repositories.readable(Caller.from(sc), repoId);
        var list = store.artifacts(run(repoId, runId).id()).stream()
                .map(ArtifactOut::of)
                .toList();
        return new ArtifactList(list, list.size());
    }

    @POST
    @Path("runs/{actionRunId}/cancel")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    @JsonShape(RunOne.class)
    public Response cancel(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("actionRunId") String runId) {
        repositories.writable(Caller.from(sc), repoId);
        return Response.status(202)
                .entity(new RunOne(RunOut.of(runs.cancel(run(repoId, runId)))))
                .build();
    }

    @POST
    @Path("runs/{actionRunId}/rerun")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    @JsonShape(RunOne.class)
    public Response rerun(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("actionRunId") String runId,
            @QueryParam("failed_only") String failedOnlyParam,
            @JsonShape(ActionsJson.Rerun.class) String body) {
        repositories.writable(Caller.from(sc), repoId);
        boolean failedOnly = false;
        if (failedOnlyParam != null) {
            if (!failedOnlyParam.equals("true") && !failedOnlyParam.equals("false")) {
                throw ApiException.badRequest("failed_only must be true or false");
            }
            failedOnly = failedOnlyParam.equals("true");
        }
        JsonNode json = JsonBody.optional(body);
        if (json != null) {
            if (!json.isObject()) {
                throw ApiException.badRequest("the body is an object with failed_only, or nothing");
            }
            failedOnly = JsonBody.of(json).bool("failed_only").orElse(failedOnly);
        }
        return Response.status(201)
                .entity(new RunOne(RunOut.of(runs.rerun(run(repoId, runId), failedOnly))))
                .build();
    }

    private Run run(String repoId, String runId) {
        return store.run(repoId, runId).orElseThrow(() -> ApiException.notFound("run not found"));
    }

    // ------------------------------------------------------------------------------------------- jobs, logs

    @GET
    @Path("jobs/{jobId}")
    @RequiresScope(READ)
    public JobOne job(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("jobId") String jobId) {
        repositories.readable(Caller.from(sc), repoId);
        return new JobOne(JobOut.of(job(repoId, jobId)));
    }

    private Job job(String repoId, String jobId) {
        if (!store.repoOfJob(jobId).map(repoId::equals).orElse(false)) {
            throw ApiException.notFound("job not found");
        }
        return store.job(jobId).orElseThrow(() -> ApiException.notFound("job not found"));
    }

    /**
     * The job's log from byte {@code offset}, at most {@code limit} bytes (8 MiB), as text. {@code X-Log-Size} is
     * what is written so far and {@code X-Log-Complete} whether the job has ended; a running job's log is read where
     * it runs (on another instance, what is stored once it ends, or the run's stream meanwhile).
     */
    @GET
    @Path("jobs/{jobId}/logs")
    @RequiresScope(READ)
    @Produces(MediaType.TEXT_PLAIN)
    public Response logs(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("jobId") String jobId,
            @QueryParam("offset") String offsetParam,
            @QueryParam("limit") String limitParam) {
        repositories.readable(Caller.from(sc), repoId);
        Job job = job(repoId, jobId);
        long offset = number("offset", offsetParam, 0);
        long limit = Math.min(number("limit", limitParam, MAX_LOG_READ), MAX_LOG_READ);
        byte[] bytes;
        long size;
        try {
            if (job.logKey() != null) {
                size = job.logBytes();
                try (InputStream in = artifacts
                        .blobs()
                        .open(job.logKey(), Math.min(offset, size), Math.max(0, Math.min(limit, size - offset)))) {
                    bytes = in.readAllBytes();
                }
            } else {
                Optional<java.nio.file.Path> live = scheduler.liveLog(jobId);
                if (live.isEmpty()) {
                    size = 0;
                    bytes = new byte[0];
                } else {
                    try (FileChannel ch = FileChannel.open(live.get())) {
                        size = ch.size();
                        long n = Math.max(0, Math.min(limit, size - offset));
                        ch.position(Math.min(offset, size));
                        bytes = Channels.newInputStream(ch).readNBytes((int) n);
                    } catch (NoSuchFileException gone) {
                        size = 0;
                        bytes = new byte[0];
                    }
                }
            }
        } catch (IOException e) {
            throw new ApiException(503, "UNAVAILABLE", "the log cannot be read now; try again shortly");
        }
        return Response.ok(bytes, "text/plain; charset=utf-8")
                .header("X-Log-Size", size)
                .header("X-Log-Complete", job.status().equals("completed"))
                .header("Cache-Control", "no-store")
                .build();
    }

    private static long number(String name, String value, long dflt) {
        if (value == null || value.isEmpty()) {
            return dflt;
        }
        try {
            long n = Long.parseLong(value);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a non-negative whole number of bytes");
        }
    }

    // ------------------------------------------------------------------------------------------- artifacts

    @GET
    @Path("artifacts/{actionArtifactId}")
    @RequiresScope(READ)
    @Produces("application/zip")
    public Response download(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("actionArtifactId") String artifactId) {
        repositories.readable(Caller.from(sc), repoId);
        Artifact a = store.artifact(repoId, artifactId).orElseThrow(() -> ApiException.notFound("artifact not found"));
        StreamingOutput body = out -> {
            try (InputStream in = artifacts.blobs().open(a.blobKey())) {
                in.transferTo(out);
            }
        };
        String file = a.name().replaceAll("[^A-Za-z0-9._-]", "_") + ".zip";
        return Response.ok(body, "application/zip")
                .header("Content-Length", a.size())
                .header("Content-Disposition", "attachment; filename=\"" + file + "\"")
                .header("X-Content-Type-Options", "nosniff")
                .build();
    }

    @DELETE
    @Path("artifacts/{actionArtifactId}")
    @RequiresScope(WRITE)
    public ActionsJson.Deleted deleteArtifact(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("actionArtifactId") String artifactId) {
        repositories.writable(Caller.from(sc), repoId);
        Artifact a = store.artifact(repoId, artifactId).orElseThrow(() -> ApiException.notFound("artifact not found"));
        artifacts.delete(a);
        return new ActionsJson.Deleted(true);
    }

    // ------------------------------------------------------------------------------------------- secrets

    @GET
    @Path("secrets")
    @RequiresScope(WRITE)
    public SecretList listSecrets(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        repositories.writable(Caller.from(sc), repoId);
        var list = secrets.list(repoId).stream()
                .map(s -> new SecretOut(s.name(), ActionsJson.iso(s.createdAt()), ActionsJson.iso(s.updatedAt())))
                .toList();
        return new SecretList(list, list.size());
    }

    /** Sets a secret (201 when it is new, else 200); the answer has its name and times, never its value. */
    @PUT
    @Path("secrets/{name}")
    @RequiresScope(WRITE)
    @JsonShape(ActionsJson.SecretOne.class)
    public Response putSecret(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("name") String name,
            @JsonShape(ActionsJson.SecretPut.class) JsonNode json) {
        repositories.writable(Caller.from(sc), repoId);
        String n = Secrets.checkName(name);
        NulText.reject(json);
        String value = JsonBody.of(json).text("value", 1, Secrets.MAX_VALUE);
        boolean created = secrets.put(repoId, n, value);
        SecretOut out = secrets.list(repoId).stream()
                .filter(x -> x.name().equals(n))
                .map(x -> new SecretOut(x.name(), ActionsJson.iso(x.createdAt()), ActionsJson.iso(x.updatedAt())))
                .findFirst()
                .orElseThrow();
        return Response.status(created ? 201 : 200)
                .entity(new ActionsJson.SecretOne(out))
                .build();
    }

    @DELETE
    @Path("secrets/{name}")
    @RequiresScope(WRITE)
    public ActionsJson.Deleted deleteSecret(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("name") String name) {
        repositories.writable(Caller.from(sc), repoId);
        if (!secrets.delete(repoId, Secrets.checkName(name))) {
            throw ApiException.notFound("secret not found");
        }
        return new ActionsJson.Deleted(true);
    }
}
