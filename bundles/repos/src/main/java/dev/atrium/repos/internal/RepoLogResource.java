package dev.atrium.repos.internal;

import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/log[/:ref[/:path]]}: the history of a ref, or of one path in it. */
@Component(service = RepoLogResource.class)
@KernelResource
@Path("/api/repos/{repoId}/log")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoLogResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoLogResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> log(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @QueryParam("ref") String ref,
            @QueryParam("path") String path,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        return RepoHistory.log(access, repositories, sc, repoId, ref, path, null, null, null, limit, offset);
    }

    @GET
    @Path("{ref}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> logOfRef(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("ref") String ref,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        return RepoHistory.log(access, repositories, sc, repoId, ref, null, null, null, null, limit, offset);
    }

    @GET
    @Path("{ref}/{path: .+}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> logOfPath(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("ref") String ref,
            @PathParam("path") String path,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        return RepoHistory.log(access, repositories, sc, repoId, ref, path, null, null, null, limit, offset);
    }
}
