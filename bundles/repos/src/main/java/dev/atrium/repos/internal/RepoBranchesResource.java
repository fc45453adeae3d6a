package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import dev.atrium.repos.internal.RepoAccess.Located;
import java.util.LinkedHashMap;
import java.util.List;
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
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/branches}: listing, creating and deleting branches, and choosing the default one. */
@Component(service = RepoBranchesResource.class)
@KernelResource
@Path("/api/repos/{repoId}/branches")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoBranchesResource {

    private final Repositories repositories;
    private final RepoAccess access;

    @Activate
    public RepoBranchesResource(@Reference Repositories repositories, @Reference RepoAccess access) {
        this.repositories = repositories;
        this.access = access;
    }

    private Map<String, Object> json(Located l, UriInfo uri) {
        return access.json(
                l.repo(),
                l.space(),
                uri.getBaseUri(),
                repositories.store().stars(l.repo().id()));
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Branches.class)
    public Map<String, Object> branches(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Located l = access.readable(ExploreViews.callerOrNull(sc), repoId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            return Map.of("branches", GitReads.branches(git, l.repo().defaultBranch()));
        }
    }

    @POST
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.OneBranch.class)
    public Response createBranch(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.CreateBranch.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Located l = access.writable(caller, repoId);
        JsonBody b = JsonBody.of(body);
        String name = GitNames.checkBranch(b.text("name", 1, 200));
        String from = b.optionalText("from", 1, 256).orElse(l.repo().defaultBranch());
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            RefChange change = GitWrites.createBranch(git, name, from);
            repositories.pushed(l.repo(), caller.principalId(), List.of(change));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("commit", change.newId());
            m.put("is_default", name.equals(l.repo().defaultBranch()));
            return Response.status(201).entity(Map.of("branch", m)).build();
        }
    }

    @DELETE
    @Path("{branch: .+}")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Deleted.class)
    public Map<String, Object> deleteBranch(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("branch") String branch) {
        Caller caller = Caller.from(sc);
        Located l = access.writable(caller, repoId);
        GitNames.checkBranch(branch); // before anything touches the disk: the name arrives raw, '..' segments included
        if (branch.equals(l.repo().defaultBranch())) {
            throw ApiException.conflict("the default branch cannot be deleted; make another branch the default first");
        }
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            repositories.pushed(l.repo(), caller.principalId(), List.of(GitWrites.deleteBranch(git, branch)));
        }
        return Map.of("success", true);
    }

    @POST
    @Path("{branch: .+}/default")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.One.class)
    public Map<String, Object> setDefault(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @PathParam("branch") String branch) {
        Located l = access.writable(Caller.from(sc), repoId);
        Repository r = repositories.update(l.repo(), null, null, null, GitNames.checkBranch(branch), null);
        return Map.of("repository", json(new Located(r, l.space(), true), uri));
    }
}
