package dev.atrium.repos.internal;

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

/** {@code /api/repos/:id/tree/:ref[/:path]}: a directory listing at a ref. */
@Component(service = RepoTreeResource.class)
@KernelResource
@Path("/api/repos/{repoId}/tree")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoTreeResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoTreeResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @Path("{ref}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Tree.class)
    public Map<String, Object> treeRoot(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("ref") String ref) {
        return tree(sc, repoId, ref, "");
    }

    @GET
    @Path("{ref}/{path: .+}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Tree.class)
    public Map<String, Object> tree(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("ref") String ref,
            @PathParam("path") String path) {
        Located l = access.readable(ExploreViews.callerOrNull(sc), repoId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            return GitReads.tree(git, ref, path);
        }
    }
}
