package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.internal.GitReads.LogQuery;
import dev.atrium.repos.internal.GitWrites.CommitRequest;
import dev.atrium.repos.internal.GitWrites.FileChange;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/spaces/:spaceId/git/...}: history of the workspace's default repository. A workspace without
 * one answers 404 saying so; it is never created here ({@code POST .../init-repo} does that).
 */
@Component(service = SpaceGitResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/git")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceGitResource {

    private final OwnerScope ownerScope;
    private final Repositories repositories;
    private final ReposResource repos;

    @Activate
    public SpaceGitResource(
            @Reference OwnerScope ownerScope, @Reference Repositories repositories, @Reference ReposResource repos) {
        this.ownerScope = ownerScope;
        this.repositories = repositories;
        this.repos = repos;
    }

    private Repository defaultRepository(Caller caller, String spaceId) {
        SpaceRef space = ownerScope.require(caller, spaceId);
        return repositories
                .store()
                .defaultOf(space.id())
                .orElseThrow(() -> ApiException.notFound(
                        "this workspace has no default repository; create one with POST /api/spaces/" + spaceId
                                + "/init-repo"));
    }

    @POST
    @Path("commit")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Committed.class)
    public Response commit(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(RepoJson.CommitInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Repository r = defaultRepository(caller, spaceId);
        return Response.status(201)
                .entity(repos.commit(r, caller, GitWrites.request(body, r.defaultBranch(), caller)))
                .build();
    }

    @GET
    @Path("log")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> log(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("path") String path,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        return history(Caller.from(sc), spaceId, path, limit, offset);
    }

    @GET
    @Path("history/{path: .+}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Log.class)
    public Map<String, Object> fileHistory(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("path") String path,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        return history(Caller.from(sc), spaceId, path, limit, offset);
    }

    private Map<String, Object> history(Caller caller, String spaceId, String path, String limit, String offset) {
        Repository r = defaultRepository(caller, spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r)) {
            return GitReads.log(
                    git, r.defaultBranch(), new LogQuery(null, path, null, null, null, page.limit(), page.offset()));
        }
    }

    @GET
    @Path("commits/{commitId}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.CommitDetail.class)
    public Map<String, Object> commitDetail(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("commitId") String commitId) {
        Repository r = defaultRepository(Caller.from(sc), spaceId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r)) {
            Map<String, Object> d = GitReads.commitDiff(git, commitId, null);
            d.remove("patch");
            d.remove("patch_truncated");
            return d;
        }
    }

    @GET
    @Path("diff/{commitId}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.CommitDiff.class)
    public Map<String, Object> diff(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("commitId") String commitId) {
        Repository r = defaultRepository(Caller.from(sc), spaceId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r)) {
            return GitReads.commitDiff(git, commitId, null);
        }
    }

    /**
     * {@code POST .../git/restore} {@code {path, commit, message?}}: a new commit on the default branch that puts
     * the file back as it was at {@code commit} (or removes it if it did not exist there).
     */
    @POST
    @Path("restore")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Committed.class)
    public Response restore(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(RepoJson.Restore.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Repository r = defaultRepository(caller, spaceId);
        JsonBody b = JsonBody.of(body);
        String path = GitReads.checkPath(b.text("path", 1, 4096));
        String from = b.text("commit", 1, 256);
        String message = b.optionalText("message", 1, 65_536).orElse("Restore " + path + " from " + from);
        FileChange change;
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r);
                RevWalk walk = new RevWalk(git)) {
            RevCommit c = GitReads.commit(git, walk, from);
            try (TreeWalk tw = TreeWalk.forPath(git, path, c.getTree())) {
                if (tw == null) {
                    change = new FileChange(path, null, false);
                } else if (FileMode.TREE.equals(tw.getFileMode(0))) {
                    throw ApiException.badRequest(path + " is a directory at " + from + "; restore files one by one");
                } else {
                    change = new FileChange(
                            path,
                            git.open(tw.getObjectId(0)).getCachedBytes(Integer.MAX_VALUE),
                            FileMode.EXECUTABLE_FILE.equals(tw.getFileMode(0)));
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        PersonIdent author = new PersonIdent(caller.principalId(), caller.principalId() + "@users.noreply.atrium");
        CommitRequest req = new CommitRequest(r.defaultBranch(), null, message, author, List.of(change), false);
        return Response.status(201).entity(repos.commit(r, caller, req)).build();
    }
}
