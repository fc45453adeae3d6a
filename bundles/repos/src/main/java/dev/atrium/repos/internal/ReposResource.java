package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import dev.atrium.repos.internal.GitWrites.CommitRequest;
import dev.atrium.repos.internal.RepoAccess.Located;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.revwalk.RevWalk;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/repos/...}: a repository addressed by its id. Access is decided by {@link RepoAccess}. Stars, branches,
 * history, trees, blobs, diffs, blame, exports and uploads have their own resources with more specific roots
 * ({@link RepoStarsResource}, {@link RepoBranchesResource}, {@link RepoCommitsResource}, {@link RepoLogResource},
 * {@link RepoTreeResource}, {@link RepoBlobResource}, {@link RepoDiffResource}, {@link RepoBlameResource},
 * {@link RepoExportResource}, {@link RepoImportResource}): JAX-RS picks one root resource per request, so no two share
 * a root.
 */
@Component(service = ReposResource.class)
@KernelResource
@Path("/api/repos")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ReposResource {

    private final Repositories repositories;
    private final RepoAccess access;
    private final UpstreamSync sync;
    private final OwnerScope ownerScope;
    private final ExploreStore explore;

    @Activate
    public ReposResource(
            @Reference ExploreStore explore,
            @Reference Repositories repositories,
            @Reference RepoAccess access,
            @Reference OwnerScope ownerScope,
            @Reference UpstreamSync sync) {
        this.sync = sync;
        this.explore = explore;
        this.repositories = repositories;
        this.access = access;
        this.ownerScope = ownerScope;
    }

    private Map<String, Object> json(Located l, UriInfo uri) {
        return access.json(
                l.repo(),
                l.space(),
                uri.getBaseUri(),
                repositories.store().stars(l.repo().id()));
    }

    // ------------------------------------------------------------------------------------------- repository

    @GET
    @Path("starred")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.StarredPage.class)
    public Map<String, Object> starred(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        Caller caller = Caller.from(sc);
        PageRequest page = PageRequest.of(limit, offset);
        List<Map<String, Object>> items = new ArrayList<>();
        for (Repository r : repositories.store().starredBy(caller.principalId(), page.limit(), page.offset())) {
            try {
                items.add(json(access.readable(caller, r.id()), uri));
            } catch (ApiException noLongerVisible) {
                // a starred repository that went private or away is not listed
            }
        }
        return page.body("repositories", items, repositories.store().countStarredBy(caller.principalId()));
    }

    @GET
    @Path("{repoId}")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.One.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @Context UriInfo uri, @PathParam("repoId") String repoId) {
        return Map.of("repository", json(access.readable(Caller.from(sc), repoId), uri));
    }

    @PATCH
    @Path("{repoId}")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.Update.class) JsonNode body) {
        Located l = access.writable(Caller.from(sc), repoId);
        JsonBody b = JsonBody.of(body);
        String name = b.optionalText("name", 1, 100).orElse(null);
        String description = b.optionalText("description", 0, 1000).orElse(null);
        String visibility =
                b.oneOf("visibility", SpaceReposResource.VISIBILITIES).orElse(null);
        String branch = b.optionalText("default_branch", 1, 200).orElse(null);
        Boolean force = b.bool("allow_force_push").orElse(null);
        Boolean mergesOnly = b.bool("merges_only").orElse(null);
        List<String> topics = Topics.of(body);
        Boolean catalog = b.bool("catalog").orElse(null);
        if (topics != null) {
            explore.setTopics(l.repo().id(), topics);
        }
        if (catalog != null) {
            explore.setInCatalog(l.repo().id(), catalog);
        }
        Repository r = repositories.update(l.repo(), name, description, visibility, branch, force);
        if (mergesOnly != null) {
            repositories.store().setMergesOnly(r.id(), mergesOnly);
        }
        return Map.of("repository", json(new Located(r, l.space(), true), uri));
    }

    @DELETE
    @Path("{repoId}")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        repositories.delete(access.writable(Caller.from(sc), repoId).repo());
        return Map.of("success", true);
    }

    @POST
    @Path("{repoId}/fork")
    @Consumes(MediaType.WILDCARD)
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.One.class)
    public Response fork(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.Fork.class) String raw) {
        Caller caller = Caller.from(sc);
        Located source = access.readable(caller, repoId);
        JsonBody b = optionalBody(raw);
        String spaceId = b == null ? null : b.optionalText("space_id", 1, 200).orElse(null);
        if (spaceId == null) {
            if (!source.owned()) {
                throw ApiException.badRequest("space_id is required: the workspace of yours to fork into");
            }
            spaceId = source.space().id();
        }
        SpaceRef target = ownerScope.require(caller, spaceId);
        String name = b == null ? null : b.optionalText("name", 1, 100).orElse(null);
        if (name == null) {
            name = source.repo().name();
            if (target.id().equals(source.space().id())) {
                name = name + "-fork";
            }
        }
        Repository fork = repositories.fork(source.repo(), target.id(), name);
        return Response.status(201)
                .entity(Map.of("repository", access.json(fork, target, uri.getBaseUri(), 0)))
                .build();
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = JsonMappers.create();

    /** A body that may be left out entirely (no Content-Type either); when present it must be a JSON object. */
    static JsonBody optionalBody(String raw) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        try {
            return JsonBody.of(JSON.readTree(raw));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw ApiException.badRequest("the body is not valid JSON: " + e.getOriginalMessage());
        }
    }

    // ------------------------------------------------------------------------------------------ status, search

    @GET
    @Path("{repoId}/status")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Status.class)
    public Map<String, Object> status(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Located l = access.readable(Caller.from(sc), repoId);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            return GitReads.status(git, l.repo(), repositories.directory(l.repo()));
        }
    }

    @GET
    @Path("{repoId}/search")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.Search.class)
    public Map<String, Object> search(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @QueryParam("q") String q,
            @QueryParam("ref") String ref,
            @QueryParam("type") String type,
            @QueryParam("limit") String limit) {
        Located l = access.readable(Caller.from(sc), repoId);
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 200) {
            throw ApiException.badRequest("q must be at most 200 characters");
        }
        if (type != null && !Set.of("path", "content", "all").contains(type)) {
            throw ApiException.badRequest("type must be path, content or all");
        }
        PageRequest page = PageRequest.of(limit, null);
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            return GitReads.search(
                    git, ref == null || ref.isBlank() ? l.repo().defaultBranch() : ref, q, type, page.limit());
        }
    }

    // ------------------------------------------------------------------------------------------- writes

    @POST
    @Path("{repoId}/commit")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Committed.class)
    public Response commit(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.CommitInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Located l = access.writable(caller, repoId);
        CommitRequest req = GitWrites.request(body, l.repo().defaultBranch(), caller);
        return Response.status(201).entity(commit(l.repo(), caller, req)).build();
    }

    /** Whether the branch exists (a merges-only default branch may still be made: a repository starts somewhere). */
    private boolean exists(Repository r, String branch) {
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r)) {
            return git.exactRef(org.eclipse.jgit.lib.Constants.R_HEADS + branch) != null;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    Map<String, Object> commit(Repository r, Caller caller, CommitRequest req) {
        if (req.branch().equals(r.defaultBranch()) && repositories.mergesOnly(r) && exists(r, req.branch())) {
            throw ApiException.conflict("the default branch " + r.defaultBranch()
                    + " takes merges of pull requests only (merges_only): commit to another branch and open one");
        }
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r);
                RevWalk walk = new RevWalk(git)) {
            RefChange change = GitWrites.commit(git, req);
            repositories.pushed(r, caller.principalId(), List.of(change));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("branch", req.branch());
            m.put("commit", GitReads.commitJson(walk.parseCommit(ObjectId.fromString(change.newId()))));
            return m;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code {url, token?}}: makes {@code url} the upstream and fetches it. */
    @POST
    @Path("{repoId}/fetch-remote")
    @Consumes(MediaType.APPLICATION_JSON)
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Fetched.class)
    public Map<String, Object> fetchRemote(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.FetchRemote.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Repository r = access.writable(caller, repoId).repo();
        JsonBody b = JsonBody.of(body);
        return sync.fetchRemote(
                caller,
                r,
                b.text("url", 1, 2048),
                b.optionalText("token", 1, 4096).orElse(null));
    }

    /** {@code {token?}}: fetches the upstream's branches into {@code refs/remotes/upstream/*} and its new tags. */
    @POST
    @Path("{repoId}/fetch")
    @Consumes(MediaType.WILDCARD)
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Fetched.class)
    public Map<String, Object> fetch(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.FetchUpstream.class) String text) {
        Caller caller = Caller.from(sc);
        Repository r = access.writable(caller, repoId).repo();
        return sync.fetch(caller, r, RepoSyncResource.token(text));
    }

    /** {@code POST /api/repos/import-external}: a new repository in the caller's workspace, fetched from a remote URL. */
    @POST
    @Path("import-external")
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.ImportedExternal.class)
    public Response importExternal(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @JsonShape(RepoJson.ImportExternal.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String url = b.text("url", 1, 2048);
        SpaceRef space = ownerScope.require(caller, b.text("space_id", 1, 200));
        URI remote;
        try {
            remote = new URI(url);
        } catch (URISyntaxException e) {
            throw ApiException.badRequest("url is not a valid URL");
        }
        String token = null;
        JsonNode auth = body.get("auth");
        if (auth != null && !auth.isNull()) {
            token = JsonBody.of(auth).optionalText("token", 1, 4096).orElse(null);
        }
        String name = b.optionalText("name", 1, 100).orElseGet(() -> nameFrom(remote));
        String description = b.optionalText("description", 0, 1000).orElse("");
        String visibility =
                b.oneOf("visibility", SpaceReposResource.VISIBILITIES).orElse("private");
        RepositoryRegistry.ImportedRepository imported =
                repositories.importRemote(space.id(), name, description, visibility, remote, token);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("repository", access.json(imported.repository(), space, uri.getBaseUri(), 0));
        m.put("partial", imported.partial());
        m.put("source_url", imported.sourceUrl());
        return Response.status(201).entity(m).build();
    }

    private static String nameFrom(URI remote) {
        String path = remote.getPath() == null ? "" : remote.getPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        String last = path.substring(path.lastIndexOf('/') + 1);
        if (last.endsWith(".git")) {
            last = last.substring(0, last.length() - 4);
        }
        if (last.isEmpty()) {
            throw ApiException.badRequest("name is required: the URL does not end in a repository name");
        }
        return last;
    }
}
