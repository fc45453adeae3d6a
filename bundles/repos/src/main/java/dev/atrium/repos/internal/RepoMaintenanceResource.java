package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Jobs;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.repos.api.Repository;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /admin/repos/:id/gc}: the operator's view of a repository's maintenance ({@code GET}) and a request for a
 * collection now ({@code POST}, 202 with its job: it runs in the background, one repository at a time).
 */
@Component(service = RepoMaintenanceResource.class)
@KernelResource
@Path("/admin/repos/{repoId}/gc")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class RepoMaintenanceResource {

    private final RepositoryStore store;
    private final RepositoryMaintenance maintenance;

    @Activate
    public RepoMaintenanceResource(@Reference RepositoryStore store, @Reference RepositoryMaintenance maintenance) {
        this.store = store;
        this.maintenance = maintenance;
    }

    @GET
    @JsonShape(RepoJson.Gc.class)
    public Map<String, Object> status(@PathParam("repoId") String repoId) {
        return Map.of("gc", RepositoryMaintenance.body(maintenance.status(repository(repoId))));
    }

    @POST
    @JsonShape(RepoJson.GcRequested.class)
    public Response collect(@PathParam("repoId") String repoId) {
        Repository repository = repository(repoId);
        Jobs.Job job = maintenance.request(repository);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("gc", RepositoryMaintenance.body(maintenance.status(repository)));
        body.put("job", job.snapshot().toJson());
        return Response.accepted(body).build();
    }

    private Repository repository(String repoId) {
        return store.byId(repoId).orElseThrow(() -> ApiException.notFound("repository not found"));
    }
}
