package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import java.util.Map;
import javax.ws.rs.Consumes;
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

/**
 * {@code POST /api/spaces/:spaceId/init-repo}: creates the workspace's default repository, the one
 * {@code /api/spaces/:spaceId/git/*} acts on. A workspace never gets one implicitly.
 */
@Component(service = SpaceInitRepoResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/init-repo")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceInitRepoResource {

    private final OwnerScope ownerScope;
    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public SpaceInitRepoResource(
            @Reference OwnerScope ownerScope, @Reference Repositories repositories, @Reference RepoAccess access) {
        this.access = access;
        this.ownerScope = ownerScope;
        this.repositories = repositories;
    }

    @POST
    @Consumes(MediaType.WILDCARD)
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.One.class)
    public Response init(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @JsonShape(RepoJson.Init.class) String raw) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = ReposResource.optionalBody(raw);
        String name = b == null ? space.slug() : b.optionalText("name", 1, 100).orElse(space.slug());
        String branch =
                b == null ? "main" : b.optionalText("default_branch", 1, 200).orElse("main");
        if (repositories.store().defaultOf(space.id()).isPresent()) {
            throw ApiException.conflict("this workspace already has a default repository");
        }
        Repository r = repositories.create(space.id(), name, "", "private", branch, true, null);
        return Response.status(201)
                .entity(Map.of("repository", access.json(r, space, uri.getBaseUri(), 0)))
                .build();
    }
}
