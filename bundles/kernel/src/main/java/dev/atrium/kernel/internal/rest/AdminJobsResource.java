package dev.atrium.kernel.internal.rest;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Jobs;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.internal.jobs.JobBoard;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /admin/jobs}: the long jobs capabilities run, running first, then the newest finished (see {@link Jobs}). */
@Component(service = AdminJobsResource.class)
@KernelResource
@Path("/admin/jobs")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class AdminJobsResource {

    private static final Set<String> STATES = Set.of(Jobs.RUNNING, Jobs.SUCCEEDED, Jobs.FAILED);

    private final JobBoard board;

    @Activate
    public AdminJobsResource(@Reference JobBoard board) {
        this.board = board;
    }

    @GET
    @JsonShape(KernelJson.JobList.class)
    public Map<String, Object> list(@QueryParam("state") String state) {
        if (state != null && !state.isEmpty() && !STATES.contains(state)) {
            throw ApiException.badRequest("state must be running, succeeded or failed");
        }
        return Map.of(
                "jobs",
                board.list(state == null || state.isEmpty() ? null : state).stream()
                        .map(Jobs.Snapshot::toJson)
                        .toList());
    }

    @GET
    @Path("{jobId}")
    @JsonShape(KernelJson.OneJob.class)
    public Map<String, Object> one(@PathParam("jobId") String jobId) {
        return Map.of(
                "job",
                board.find(jobId)
                        .orElseThrow(() -> ApiException.notFound("job not found"))
                        .toJson());
    }
}
