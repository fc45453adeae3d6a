package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.internal.RepoAccess.Located;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/star}: the caller's star on a repository, and its star count. */
@Component(service = RepoStarsResource.class)
@KernelResource
@Path("/api/repos/{repoId}/star")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoStarsResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoStarsResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Star.class)
    public Map<String, Object> starState(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Caller caller = Caller.from(sc);
        Located l = access.readable(caller, repoId);
        return starBody(l.repo(), caller);
    }

    @POST
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Star.class)
    public Map<String, Object> star(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Caller caller = Caller.from(sc);
        Located l = access.readable(caller, repoId);
        if (repositories.store().star(l.repo().id(), caller.principalId())) {
            repositories.publish(
                    RepositoryEvents.STARRED, l.repo(), Map.of(RepositoryEvents.PRINCIPAL_ID, caller.principalId()));
        }
        return starBody(l.repo(), caller);
    }

    @DELETE
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Star.class)
    public Map<String, Object> unstar(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Caller caller = Caller.from(sc);
        Located l = access.readable(caller, repoId);
        if (repositories.store().unstar(l.repo().id(), caller.principalId())) {
            repositories.publish(
                    RepositoryEvents.UNSTARRED, l.repo(), Map.of(RepositoryEvents.PRINCIPAL_ID, caller.principalId()));
        }
        return starBody(l.repo(), caller);
    }

    private Map<String, Object> starBody(Repository r, Caller caller) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("starred", repositories.store().starred(r.id(), caller.principalId()));
        m.put("stars", repositories.store().stars(r.id()));
        return m;
    }
}
