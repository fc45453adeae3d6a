package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/spaces/:spaceId/repos}: a workspace's repositories. */
@Component(service = SpaceReposResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/repos")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceReposResource {

    static final Set<String> VISIBILITIES = Set.of("public", "private");

    private final OwnerScope ownerScope;
    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public SpaceReposResource(
            @Reference OwnerScope ownerScope, @Reference Repositories repositories, @Reference RepoAccess access) {
        this.access = access;
        this.ownerScope = ownerScope;
        this.repositories = repositories;
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Summaries.class)
    public Map<String, Object> list(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        List<Map<String, Object>> items = repositories.store().list(space.id()).stream()
                .map(r -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("id", r.id());
                    m.put("name", r.name());
                    m.put("default_branch", r.defaultBranch());
                    return m;
                })
                .toList();
        return Map.of("repositories", items);
    }

    @POST
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @JsonShape(RepoJson.Create.class) JsonNode body) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String name = b.text("name", 1, 100);
        String description = b.optionalText("description", 0, 1000).orElse("");
        String visibility = b.oneOf("visibility", VISIBILITIES).orElse("private");
        String branch = b.optionalText("default_branch", 1, 200).orElse("main");
        Repository r = repositories.create(space.id(), name, description, visibility, branch, false, null);
        return Response.status(201)
                .entity(Map.of("repository", access.json(r, space, uri.getBaseUri(), 0)))
                .build();
    }
}
