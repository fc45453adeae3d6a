package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/explore/suggest}: type-ahead over every public repository (a root path of its own: {@code /api/explore}
 * would be a prefix of other bundles' routes).
 */
@Component(service = ExploreSuggestResource.class)
@KernelResource
@Path("/api/explore/suggest")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ExploreSuggestResource {

    private final ExploreCatalogResource catalog;

    @Activate
    public ExploreSuggestResource(@Reference ExploreCatalogResource catalog) {
        this.catalog = catalog;
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.Suggestions.class)
    public Map<String, Object> suggest(@Context UriInfo uri, @QueryParam("q") String q) {
        return catalog.suggestions(uri, q, false);
    }
}
