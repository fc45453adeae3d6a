package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Jobs;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.util.HashMap;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /admin/repos/maintenance}: maintenance of every repository now ({@code POST}, 202 with its job, which
 * {@code /admin/jobs} shows too) and the latest such job ({@code GET}).
 */
@Component(service = EveryRepositoryMaintenanceResource.class)
@KernelResource
@Path("/admin/repos/maintenance")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class EveryRepositoryMaintenanceResource {

    private final RepositoryMaintenance maintenance;

    @Activate
    public EveryRepositoryMaintenanceResource(@Reference RepositoryMaintenance maintenance) {
        this.maintenance = maintenance;
    }

    @GET
    @JsonShape(RepoJson.MaintenanceJob.class)
    public Map<String, Object> latest() {
        return job(maintenance.latestOfEveryRepository().orElse(null));
    }

    @POST
    @JsonShape(RepoJson.MaintenanceJob.class)
    public Response run() {
        return Response.accepted(job(maintenance.maintainEveryRepository())).build();
    }

    private static Map<String, Object> job(Jobs.Job job) {
        Map<String, Object> body = new HashMap<>();
        body.put("job", job == null ? null : job.snapshot().toJson());
        return body;
    }
}
