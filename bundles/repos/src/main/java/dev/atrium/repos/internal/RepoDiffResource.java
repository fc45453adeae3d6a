package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.internal.RepoAccess.Located;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/diff/:base...:head}: the changes between two revisions, as JSON or a patch. */
@Component(service = RepoDiffResource.class)
@KernelResource
@Path("/api/repos/{repoId}/diff")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoDiffResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoDiffResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @Path("{baseHead: .+}")
    @Produces({MediaType.APPLICATION_JSON, "text/x-diff"})
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Diff.class)
    public Response diff(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("baseHead") String baseHead,
            @QueryParam("format") String format) {
        Located l = access.readable(Caller.from(sc), repoId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            StringBuilder patch = new StringBuilder();
            Map<String, Object> body = GitReads.diff(git, baseHead, false, patch);
            if ("patch".equals(format)) {
                return Response.ok(patch.toString(), "text/x-diff; charset=utf-8")
                        .build();
            }
            return Response.ok(body, MediaType.APPLICATION_JSON).build();
        }
    }
}
