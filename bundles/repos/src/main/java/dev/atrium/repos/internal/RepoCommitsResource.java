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

/** {@code /api/repos/:id/commits}: a branch's history, filtered by path, author and dates. */
@Component(service = RepoCommitsResource.class)
@KernelResource
@Path("/api/repos/{repoId}/commits")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoCommitsResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoCommitsResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> commits(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @QueryParam("ref") String ref,
            @QueryParam("path") String path,
            @QueryParam("author") String author,
            @QueryParam("since") String since,
            @QueryParam("until") String until,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset,
            @QueryParam("cursor") String cursor) {
        return RepoHistory.log(
                access,
                repositories,
                sc,
                repoId,
                ref,
                path,
                author,
                since,
                until,
                limit,
                cursor != null && offset == null ? cursor : offset);
    }
}
