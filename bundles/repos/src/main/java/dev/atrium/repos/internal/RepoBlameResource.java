package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
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
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/blame/:ref/:path}: who last changed each line of a file. */
@Component(service = RepoBlameResource.class)
@KernelResource
@Path("/api/repos/{repoId}/blame")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoBlameResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoBlameResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @Path("{ref}")
    @RequiresScope("repos:read")
    public Map<String, Object> blameWithoutPath(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        access.readable(Caller.from(sc), repoId);
        throw ApiException.badRequest("a file path is required: /blame/:ref/:path");
    }

    @GET
    @Path("{ref}/{path: .+}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Blame.class)
    public Map<String, Object> blame(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("ref") String ref,
            @PathParam("path") String path) {
        Located l = access.readable(Caller.from(sc), repoId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            return GitReads.blame(git, ref, path);
        }
    }
}
