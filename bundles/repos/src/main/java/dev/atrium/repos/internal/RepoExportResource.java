package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.internal.RepoAccess.Located;
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
import javax.ws.rs.core.StreamingOutput;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/export}: a ref's tree as a tar.gz or zip download. */
@Component(service = RepoExportResource.class)
@KernelResource
@Path("/api/repos/{repoId}/export")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoExportResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoExportResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @Produces({"application/gzip", "application/zip", MediaType.APPLICATION_JSON})
    @RequiresScope("repos:read")
    @NotJson({"application/gzip", "application/zip"})
    public Response export(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @QueryParam("ref") String ref,
            @QueryParam("format") String format) {
        Located l = access.readable(Caller.from(sc), repoId);
        String f = format == null || format.isBlank() ? "tar.gz" : format;
        if (!f.equals("tar.gz") && !f.equals("zip")) {
            throw ApiException.badRequest("format must be tar.gz or zip");
        }
        org.eclipse.jgit.lib.Repository git = repositories.open(l.repo());
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit c = GitReads.commit(
                    git, walk, ref == null || ref.isBlank() ? l.repo().defaultBranch() : ref);
            String prefix = l.repo().name() + "-" + c.abbreviate(12).name() + "/";
            long time = c.getCommitTime();
            ObjectId tree = c.getTree();
            Archives.checkExportable(git, tree);
            org.eclipse.jgit.lib.Repository streamed = git;
            git = null;
            StreamingOutput body = out -> {
                try (streamed) {
                    Archives.export(streamed, tree, prefix, f, time, out);
                }
            };
            String file = l.repo().name() + "-" + c.abbreviate(12).name() + "." + f;
            return Response.ok(body, f.equals("zip") ? "application/zip" : "application/gzip")
                    .header("Content-Disposition", "attachment; filename=\"" + file + "\"")
                    .build();
        } finally {
            if (git != null) {
                git.close();
            }
        }
    }
}
