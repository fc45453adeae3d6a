package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OperatorOnly;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /admin/seed-repositories}: the operator edits the seed list (operator token). */
@Component(service = AdminSeedRepositoriesResource.class)
@KernelResource
@Path("/admin/seed-repositories")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@OperatorOnly
public class AdminSeedRepositoriesResource {

    private final SeedRepositories seeds;

    @Activate
    public AdminSeedRepositoriesResource(@Reference SeedRepositories seeds) {
        this.seeds = seeds;
    }

    @GET
    @JsonShape(RepoJson.Seeds.class)
    public Map<String, Object> list() {
        return Map.of(
                "repositories",
                seeds.list().stream().map(SeedRepositories.Seed::json).toList());
    }

    @POST
    @JsonShape(RepoJson.OneSeed.class)
    public Response create(@JsonShape(RepoJson.SeedInput.class) JsonNode body) {
        return Response.status(201)
                .entity(Map.of("repository", seeds.create(body).json()))
                .build();
    }

    @PATCH
    @Path("{seedId}")
    @JsonShape(RepoJson.OneSeed.class)
    public Map<String, Object> update(
            @PathParam("seedId") String seedId, @JsonShape(RepoJson.SeedInput.class) JsonNode body) {
        NulText.reject("seedId", seedId);
        return Map.of("repository", seeds.update(seedId, body).json());
    }

    @DELETE
    @Path("{seedId}")
    @JsonShape(RepoJson.Deleted.class)
    public Map<String, Object> delete(@PathParam("seedId") String seedId) {
        NulText.reject("seedId", seedId);
        seeds.delete(seedId);
        return Map.of("success", true);
    }
}
