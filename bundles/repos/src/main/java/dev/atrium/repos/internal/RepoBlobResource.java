package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.internal.RepoAccess.Located;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/blob/:ref/:path}: a file at a ref, as JSON or raw bytes. */
@Component(service = RepoBlobResource.class)
@KernelResource
@Path("/api/repos/{repoId}/blob")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoBlobResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoBlobResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @Path("{ref}")
    @RequiresScope("repos:read")
    public Response blobWithoutPath(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        access.readable(ExploreViews.callerOrNull(sc), repoId);
        throw ApiException.badRequest("a file path is required: /blob/:ref/:path");
    }

    @GET
    @Path("{ref}/{path: .+}")
    @Produces({MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Blob.class)
    public Response blob(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("ref") String ref,
            @PathParam("path") String path,
            @QueryParam("format") String format,
            @HeaderParam("Accept") String accept) {
        Located l = access.readable(ExploreViews.callerOrNull(sc), repoId);
        boolean raw = "raw".equals(format)
                || (format == null && accept != null && accept.startsWith(MediaType.APPLICATION_OCTET_STREAM));
        if (format != null && !format.equals("raw") && !format.equals("json")) {
            throw ApiException.badRequest("format must be raw or json");
        }
        org.eclipse.jgit.lib.Repository git = repositories.open(l.repo());
        try {
            GitReads.Blob b = GitReads.blob(git, ref, path);
            if (!raw) {
                return Response.ok(GitReads.blobJson(b), MediaType.APPLICATION_JSON)
                        .build();
            }
            org.eclipse.jgit.lib.Repository streamed = git;
            git = null;
            StreamingOutput body = out -> {
                try (streamed) {
                    b.loader().copyTo(out);
                }
            };
            return Response.ok(body, MediaType.APPLICATION_OCTET_STREAM)
                    .header("Content-Length", b.loader().getSize())
                    .header("X-Content-Type-Options", "nosniff")
                    .build();
        } finally {
            if (git != null) {
                git.close();
            }
        }
    }
}
