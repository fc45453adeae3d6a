package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.internal.RepoAccess.Located;
import dev.atrium.repos.internal.RepositoryOwners.Owner;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
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
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/users/:username/:repoName} and its browse routes: a repository addressed by its owner's name, read
 * through the same paths and permissions as {@code /api/repos/:repoId} (the owner reads a private one, anyone a
 * public one, anonymous callers included; anything else is the 404 of a missing repository). Delete is the owner's
 * only, and someone else's repository is that same 404.
 */
@Component(service = UserRepoResource.class)
@KernelResource
@Path("/api/users/{username}/{repoName}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class UserRepoResource {

    private final Repositories repositories;
    private final RepoAccess access;
    private final ExploreStore explore;
    private final ExploreViews views;
    private final RepoTreeResource tree;
    private final RepoBlobResource blob;
    private final RepoBranchesResource branches;
    private final RepoCommitsResource commits;

    @Activate
    public UserRepoResource(
            @Reference Repositories repositories,
            @Reference RepoAccess access,
            @Reference ExploreStore explore,
            @Reference ExploreViews views,
            @Reference RepoTreeResource tree,
            @Reference RepoBlobResource blob,
            @Reference RepoBranchesResource branches,
            @Reference RepoCommitsResource commits) {
        this.repositories = repositories;
        this.access = access;
        this.explore = explore;
        this.views = views;
        this.tree = tree;
        this.blob = blob;
        this.branches = branches;
        this.commits = commits;
    }

    /** The id of the repository the names name, when the caller may read it; 404 otherwise. */
    private Located located(SecurityContext sc, String username, String repoName) {
        NulText.reject("username", username);
        NulText.reject("repoName", repoName);
        Owner o = views.owner(username);
        Repository r = repositories
                .store()
                .byName(o.space().id(), ExploreReposResource.stripGit(repoName))
                .orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND));
        return access.readable(ExploreViews.callerOrNull(sc), r.id());
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.ExploreOne.class)
    public Map<String, Object> get(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName) {
        Located l = located(sc, username, repoName);
        ExploreStore.Listed listed =
                explore.anyById(l.repo().id()).orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND));
        Map<String, Object> item =
                views.item(listed, uri.getBaseUri()).orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND));
        item.put("visibility", l.repo().visibility());
        return Map.of("repository", item);
    }

    @DELETE
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Deleted.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName) {
        Caller caller = Caller.from(sc);
        Located l = located(sc, username, repoName);
        if (!l.owned()) {
            // by name, a repository that is not the caller's is not theirs to know about for a write: as missing
            throw ApiException.notFound(RepoAccess.NOT_FOUND);
        }
        repositories.delete(access.writable(caller, l.repo().id()).repo());
        return Map.of("success", true);
    }

    @GET
    @Path("tree/{ref}")
    @Anonymous
    @JsonShape(RepoJson.Tree.class)
    public Map<String, Object> treeRoot(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName,
            @PathParam("ref") String ref) {
        return tree.treeRoot(sc, located(sc, username, repoName).repo().id(), ref);
    }

    @GET
    @Path("tree/{ref}/{path: .+}")
    @Anonymous
    @JsonShape(RepoJson.Tree.class)
    public Map<String, Object> tree(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName,
            @PathParam("ref") String ref,
            @PathParam("path") String path) {
        return tree.tree(sc, located(sc, username, repoName).repo().id(), ref, path);
    }

    @GET
    @Path("blob/{ref}")
    @Anonymous
    @JsonShape(RepoJson.Blob.class)
    public Response blobWithoutPath(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName) {
        return blob.blobWithoutPath(sc, located(sc, username, repoName).repo().id());
    }

    @GET
    @Path("blob/{ref}/{path: .+}")
    @Produces({MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    @Anonymous
    @JsonShape(RepoJson.Blob.class)
    public Response blob(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName,
            @PathParam("ref") String ref,
            @PathParam("path") String path,
            @QueryParam("format") String format,
            @HeaderParam("Accept") String accept) {
        return blob.blob(sc, located(sc, username, repoName).repo().id(), ref, path, format, accept);
    }

    @GET
    @Path("branches")
    @Anonymous
    @JsonShape(RepoJson.Branches.class)
    public Map<String, Object> branches(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName) {
        return branches.branches(sc, located(sc, username, repoName).repo().id());
    }

    @GET
    @Path("commits")
    @Anonymous
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> commits(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @PathParam("repoName") String repoName,
            @QueryParam("ref") String ref,
            @QueryParam("path") String path,
            @QueryParam("author") String author,
            @QueryParam("since") String since,
            @QueryParam("until") String until,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset,
            @QueryParam("cursor") String cursor) {
        return commits.commits(
                sc,
                located(sc, username, repoName).repo().id(),
                ref,
                path,
                author,
                since,
                until,
                limit,
                offset,
                cursor);
    }
}
