package dev.atrium.repos.pulls.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.pulls.internal.PullStore.Comment;
import dev.atrium.repos.pulls.internal.PullStore.Pull;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
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
import javax.ws.rs.core.StreamingOutput;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/repos/:repoId/pulls}: pull requests as Gitea serves them. Anyone who may read the base repository
 * reads, opens (from a branch of it, or of a fork of it they can read), comments and reviews; its owner merges; its
 * owner or the author edits and closes; the head's owner resolves conflicts on the head branch. Who may read or change
 * a repository is the repositories bundle's answer, which asks the kernel.
 */
@Component(service = PullsResource.class)
@KernelResource
@Path("/api/repos/{repoId}/pulls")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class PullsResource {

    static final String READ = "repos:read";
    static final String WRITE = "repos:write";
    private static final int MAX_TITLE = 255;
    private static final int MAX_TEXT = 65_536;
    private static final int MAX_BRANCH = 250;
    /** A diff's JSON answer carries patches up to this many bytes; the rest is in {@code ?format=patch}. */
    private static final int MAX_PATCH_JSON = 1 << 20;

    private static final int MAX_RESOLUTION = 1 << 20;

    private final RepositoryRegistry repositories;
    private final PullStore store;
    private final Pulls pulls;

    @Activate
    public PullsResource(
            @Reference RepositoryRegistry repositories, @Reference PullStore store, @Reference Pulls pulls) {
        this.repositories = repositories;
        this.store = store;
        this.pulls = pulls;
    }

    // ---------------------------------------------------------------------------------------------- list, open

    @GET
    @RequiresScope(READ)
    @JsonShape(PullJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @QueryParam("state") String state,
            @QueryParam("base") String base,
            @QueryParam("head") String head,
            @QueryParam("author") String author,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        repositories.readable(Caller.from(sc), repoId);
        PageRequest page = PageRequest.of(limit, offset);
        if (state != null && !Set.of("open", "closed", "merged", "all").contains(state)) {
            throw ApiException.badRequest("state must be open, closed, merged or all");
        }
        PullStore.Filter f =
                new PullStore.Filter(state == null ? "open" : state.equals("all") ? null : state, base, head, author);
        return page.body(
                "pull_requests",
                store.list(repoId, f, page.limit(), page.offset()).stream()
                        .map(Pull::toJson)
                        .toList(),
                store.count(repoId, f));
    }

    @POST
    @RequiresScope(WRITE)
    @JsonShape(PullJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(PullJson.Create.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository base = repositories.readable(caller, repoId).repository();
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        String title = b.text("title", 1, MAX_TITLE);
        String body = b.optionalText("body", 0, MAX_TEXT).orElse("");
        String headBranch = branchName("head", b.text("head", 1, MAX_BRANCH));
        String baseBranch =
                branchName("base", b.optionalText("base", 1, MAX_BRANCH).orElse(base.defaultBranch()));
        Repository head = base;
        String headRepoId = b.optionalText("head_repo_id", 1, 100).orElse(repoId);
        if (!headRepoId.equals(repoId)) {
            head = repositories.readable(caller, headRepoId).repository();
            if (!repoId.equals(head.forkedFrom())) {
                throw ApiException.badRequest("head_repo_id must be this repository or a fork of it");
            }
        }
        Pull p = pulls.open(
                caller,
                base,
                head,
                headBranch,
                baseBranch,
                title,
                body,
                b.bool("draft").orElse(false));
        return Response.status(201).entity(Map.of("pull_request", p.toJson())).build();
    }

    private String branchName(String field, String name) {
        if (repositories.refNameProblem("refs/heads/" + name) != null) {
            throw ApiException.badRequest(
                    field + " is not a branch name: " + repositories.refNameProblem("refs/heads/" + name));
        }
        return name;
    }

    // --------------------------------------------------------------------------------------- one pull request

    @GET
    @Path("{number}")
    @RequiresScope(READ)
    @JsonShape(PullJson.One.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("number") String number) {
        Repository base = repositories.readable(Caller.from(sc), repoId).repository();
        return Map.of("pull_request", pulls.current(base, pull(repoId, number)).toJson());
    }

    @PATCH
    @Path("{number}")
    @RequiresScope(WRITE)
    @JsonShape(PullJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("number") String number,
            @JsonShape(PullJson.Update.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        RepositoryRegistry.Access a = repositories.readable(caller, repoId);
        Pull p = pull(repoId, number);
        mayEdit(caller, a, p);
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        String title = b.optionalText("title", 1, MAX_TITLE).orElse(null);
        String body = b.optionalText("body", 0, MAX_TEXT).orElse(null);
        String baseBranch = b.optionalText("base", 1, MAX_BRANCH)
                .map(n -> branchName("base", n))
                .orElse(null);
        if (baseBranch != null && pulls.git().branch(a.repository(), baseBranch) == null) {
            throw ApiException.badRequest("base branch " + baseBranch + " does not exist");
        }
        Boolean draft = b.bool("draft").orElse(null);
        String state = b.oneOf("state", Set.of("open", "closed")).orElse(null);
        return Map.of(
                "pull_request",
                pulls.update(caller, a.repository(), p, title, body, baseBranch, draft, state)
                        .toJson());
    }

    @POST
    @Path("{number}/close")
    @Consumes(MediaType.WILDCARD)
    @RequiresScope(WRITE)
    @JsonShape(PullJson.One.class)
    public Map<String, Object> close(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("number") String number) {
        Caller caller = Caller.from(sc);
        RepositoryRegistry.Access a = repositories.readable(caller, repoId);
        Pull p = pull(repoId, number);
        mayEdit(caller, a, p);
        return Map.of(
                "pull_request",
                pulls.update(caller, a.repository(), p, null, null, null, null, "closed")
                        .toJson());
    }

    /** The base repository's owner, or the pull request's author. */
    private static void mayEdit(Caller caller, RepositoryRegistry.Access a, Pull p) {
        if (!a.owned() && !p.authorId().equals(caller.principalId())) {
            throw ApiException.forbidden("only the repository's owner or the author may change this pull request");
        }
    }

    // ---------------------------------------------------------------------------------------- diff, conflicts

    @GET
    @Path("{number}/diff")
    @Produces({MediaType.APPLICATION_JSON, "text/x-diff"})
    @RequiresScope(READ)
    @JsonShape(PullJson.Diff.class)
    public Response diff(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("number") String number,
            @QueryParam("format") String format) {
        Repository base = repositories.readable(Caller.from(sc), repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        if ("patch".equals(format)) {
            StreamingOutput out = o -> pulls.diffs().patch(base, p.baseCommit(), p.headCommit(), o);
            return Response.ok(out, "text/x-diff; charset=utf-8").build();
        }
        if (format != null && !format.equals("json")) {
            throw ApiException.badRequest("format must be json or patch");
        }
        return Response.ok(
                        pulls.diffs().diff(base, p.baseCommit(), p.headCommit(), MAX_PATCH_JSON),
                        MediaType.APPLICATION_JSON)
                .build();
    }

    @GET
    @Path("{number}/conflicts")
    @RequiresScope(READ)
    @JsonShape(PullJson.Conflicts.class)
    public Map<String, Object> conflicts(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("number") String number) {
        Repository base = repositories.readable(Caller.from(sc), repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        PullStore.Check check = pulls.check(base, p);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mergeable", check.clean());
        m.put("base_commit", p.baseCommit());
        m.put("head_commit", p.headCommit());
        m.put("conflicts", check.conflicts());
        return m;
    }

    // ------------------------------------------------------------------------------------ comments, reviews

    @GET
    @Path("{number}/comments")
    @RequiresScope(READ)
    @JsonShape(PullJson.Comments.class)
    public Map<String, Object> comments(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("number") String number) {
        Repository base = repositories.readable(Caller.from(sc), repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        return Map.of("comments", pulls.commentsJson(base, p, store.comments(p.id())));
    }

    @POST
    @Path("{number}/comments")
    @RequiresScope(WRITE)
    @JsonShape(PullJson.OneComment.class)
    public Response comment(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("number") String number,
            @JsonShape(PullJson.NewComment.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository base = repositories.readable(caller, repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        Comment c = pulls.comment(caller, base, p, inline(base, p, b, json));
        return Response.status(201)
                .entity(Map.of(
                        "comment", pulls.commentsJson(base, p, List.of(c)).get(0)))
                .build();
    }

    /** A comment of a body: its text, and its path and line when inline (both, on a line the head's file has). */
    private Comment inline(Repository base, Pull p, JsonBody b, JsonNode json) {
        String text = b.text("body", 1, MAX_TEXT);
        String path = b.optionalText("path", 1, 4096).orElse(null);
        Integer line = b.has("line") ? line(json.get("line")) : null;
        if ((path == null) != (line == null)) {
            throw ApiException.badRequest("an inline comment needs both path and line");
        }
        if (path != null) {
            pulls.checkLine(base, p, path, line);
        }
        return new Comment(null, p.id(), null, null, text, path, line, p.headCommit(), null);
    }

    @GET
    @Path("{number}/reviews")
    @RequiresScope(READ)
    @JsonShape(PullJson.Reviews.class)
    public Map<String, Object> reviews(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("number") String number) {
        Repository base = repositories.readable(Caller.from(sc), repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        return Map.of("reviews", pulls.reviewsJson(base, p));
    }

    @POST
    @Path("{number}/reviews")
    @RequiresScope(WRITE)
    @JsonShape(PullJson.OneReview.class)
    public Response review(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("number") String number,
            @JsonShape(PullJson.NewReview.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository base = repositories.readable(caller, repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        String event = b.oneOf("event", Set.of("approve", "request_changes", "comment"))
                .orElseThrow(() -> ApiException.badRequest("event is required: approve, request_changes or comment"));
        String body = b.optionalText("body", 0, MAX_TEXT).orElse("");
        List<Comment> inline = new ArrayList<>();
        JsonNode list = json.get("comments");
        if (list != null && !list.isNull()) {
            if (!list.isArray() || list.size() > 100) {
                throw ApiException.badRequest("comments must be an array of at most 100 {path, line, body}");
            }
            // each file is read once, for the furthest line asked of it: a hundred comments on one large file are
            // one read, not a hundred
            Map<String, Integer> furthest = new java.util.LinkedHashMap<>();
            for (JsonNode c : list) {
                JsonBody cb = JsonBody.of(c);
                String path = cb.text("path", 1, 4096);
                int line = line(c.get("line"));
                furthest.merge(path, line, Math::max);
                inline.add(new Comment(null, p.id(), null, null, cb.text("body", 1, MAX_TEXT), path, line, null, null));
            }
            furthest.forEach((path, line) -> pulls.checkLine(base, p, path, line));
        }
        if (event.equals("comment") && body.isBlank() && inline.isEmpty()) {
            throw ApiException.badRequest("a comment review needs a body or inline comments");
        }
        return Response.status(201)
                .entity(Map.of("review", pulls.review(caller, base, p, event, body, inline)))
                .build();
    }

    static int line(JsonNode l) {
        if (l == null || !l.isInt() || l.intValue() < 1) {
            throw ApiException.badRequest("line must be a line number, 1 or more");
        }
        return l.intValue();
    }

    // ---------------------------------------------------------------------------------- merge, resolve, AI

    @POST
    @Path("{number}/merge")
    @Consumes(MediaType.WILDCARD)
    @RequiresScope(WRITE)
    @JsonShape(PullJson.Merged.class)
    public Map<String, Object> merge(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("number") String number,
            @JsonShape(PullJson.Merge.class) String text) {
        Caller caller = Caller.from(sc);
        Repository base = repositories.writable(caller, repoId);
        JsonNode json = JsonBody.optional(text);
        JsonBody b = JsonBody.of(
                json == null ? com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode() : json);
        if (json != null) {
            NulText.reject(json);
        }
        String strategy =
                b.oneOf("strategy", Set.of("merge", "squash", "rebase")).orElse("merge");
        String expected = b.optionalText("base_commit", 40, 40).orElse(null);
        String expectedHead = b.optionalText("head_commit", 40, 40).orElse(null);
        String message = b.optionalText("message", 1, MAX_TEXT).orElse(null);
        boolean deleteBranch = b.bool("delete_branch").orElse(false);
        return pulls.merge(caller, base, pull(repoId, number), strategy, expected, expectedHead, message, deleteBranch);
    }

    @POST
    @Path("{number}/resolve")
    @RequiresScope(WRITE)
    @JsonShape(PullJson.Resolved.class)
    public Map<String, Object> resolve(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("number") String number,
            @JsonShape(PullJson.Resolve.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository base = repositories.readable(caller, repoId).repository();
        Pull p = pulls.current(base, pull(repoId, number));
        Repository head = repositories.writable(caller, p.headRepoId());
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        JsonNode list = json.get("resolutions");
        if (list == null || !list.isArray() || list.isEmpty() || list.size() > 1000) {
            throw ApiException.badRequest("resolutions must be an array of 1 to 1000 {path, content}");
        }
        Map<String, byte[]> resolutions = new HashMap<>();
        for (JsonNode r : list) {
            JsonBody rb = JsonBody.of(r);
            String path = rb.text("path", 1, 4096);
            String content = rb.requiredString("content");
            if (content.length() > MAX_RESOLUTION) {
                throw ApiException.badRequest("a resolution's content is at most " + MAX_RESOLUTION + " characters");
            }
            if (resolutions.put(path, content.getBytes(StandardCharsets.UTF_8)) != null) {
                throw ApiException.badRequest("path " + path + " is resolved twice");
            }
        }
        String message = b.optionalText("message", 1, MAX_TEXT).orElse(null);
        return pulls.resolve(caller, base, head, p, resolutions, message);
    }

    @POST
    @Path("{number}/ai-review")
    @Consumes(MediaType.WILDCARD)
    @RequiresScope(WRITE)
    @JsonShape(PullJson.OneReview.class)
    public Response aiReview(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("number") String number) {
        Caller caller = Caller.from(sc);
        Repository base = repositories.writable(caller, repoId);
        Pull p = pulls.current(base, pull(repoId, number));
        return Response.status(201)
                .entity(Map.of("review", pulls.aiReview(caller, base, p)))
                .build();
    }

    /** The pull request {@code number} of the repository; a number that is not one is the same 404 as a missing one. */
    private Pull pull(String repoId, String number) {
        if (number == null || !number.matches("[1-9][0-9]{0,8}")) {
            throw ApiException.notFound(PullStore.NOT_FOUND);
        }
        return store.get(repoId, Integer.parseInt(number));
    }
}
