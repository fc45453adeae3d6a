package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code GET /api/seed-repositories}: the operator's seed list, for anyone (no authentication). */
@Component(service = SeedRepositoriesResource.class)
@KernelResource
@Path("/api/seed-repositories")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SeedRepositoriesResource {

    private final SeedRepositories seeds;

    @Activate
    public SeedRepositoriesResource(@Reference SeedRepositories seeds) {
        this.seeds = seeds;
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.Seeds.class)
    public Map<String, Object> list() {
        return Map.of(
                "repositories",
                seeds.list().stream().map(SeedRepositories.Seed::json).toList());
    }
}
