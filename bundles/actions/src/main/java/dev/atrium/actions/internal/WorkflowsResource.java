package dev.atrium.actions.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.actions.internal.ActionsJson.Synced;
import dev.atrium.actions.internal.ActionsJson.WorkflowList;
import dev.atrium.actions.internal.ActionsJson.WorkflowOne;
import dev.atrium.actions.internal.ActionsJson.WorkflowOut;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/repos/:repoId/workflows}: the workflow files of a repository's default branch. Reading is for whoever
 * may read the repository; writing commits to its default branch and is its owner's. {@code :path} is the file's path
 * in the repository ({@code .github/workflows/ci.yml}) or its name in {@code .github/workflows/}.
 */
@Component(service = WorkflowsResource.class)
@KernelResource
@Path("/api/repos/{repoId}/workflows")
@Produces(MediaType.APPLICATION_JSON)
public class WorkflowsResource {

    static final String READ = "repos:read";
    static final String WRITE = "repos:write";

    private final RepositoryRegistry repositories;
    private final ActionStore store;
    private final WorkflowFiles files;

    @Activate
    public WorkflowsResource(
            @Reference RepositoryRegistry repositories, @Reference ActionStore store, @Reference WorkflowFiles files) {
        this.repositories = repositories;
        this.store = store;
        this.files = files;
    }

    @GET
    @RequiresScope(READ)
    public WorkflowList list(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        repositories.readable(Caller.from(sc), repoId);
        return new WorkflowList(store.workflows(repoId).stream()
                .map(w -> WorkflowOut.of(w, false))
                .toList());
    }

    @POST
    @Path("sync-all")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    public Synced syncAll(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Repository repo = repositories.writable(Caller.from(sc), repoId);
        return new Synced(files.sync(repo, null));
    }

    @GET
    @Path("{path: .+}")
    @RequiresScope(READ)
    public WorkflowOne get(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("path") String path) {
        repositories.readable(Caller.from(sc), repoId);
        return new WorkflowOne(WorkflowOut.of(find(repoId, path), true));
    }

    private ActionStore.WorkflowFile find(String repoId, String path) {
        String p = WorkflowFiles.normalize(path);
        return store.workflow(repoId, p)
                .or(() -> path.contains("/")
                        ? java.util.Optional.empty()
                        : store.workflows(repoId).stream()
                                .filter(w -> w.path().endsWith("/" + path))
                                .findFirst())
                .orElseThrow(() -> ApiException.notFound("workflow not found"));
    }

    /** The body is the YAML itself (any type but JSON), or JSON {@code {"content": …, "message": …}}. */
    @PUT
    @Path("{path: .+}")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    @JsonShape(WorkflowOne.class)
    public Response put(
            @Context SecurityContext sc,
            @Context HttpHeaders headers,
            @PathParam("repoId") String repoId,
            @PathParam("path") String path,
            @JsonShape(ActionsJson.WorkflowPut.class) String body) {
        Caller caller = Caller.from(sc);
        Repository repo = repositories.writable(caller, repoId);
        String p = WorkflowFiles.normalize(path);
        String content = body == null ? "" : body;
        String message = null;
        MediaType type = headers.getMediaType();
        if (type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE)) {
            JsonNode json = JsonBody.optional(body);
            if (json == null || !json.isObject()) {
                throw ApiException.badRequest("the body is the workflow's YAML, or JSON with content");
            }
            NulText.reject(json);
            JsonBody b = JsonBody.of(json);
            content = b.text("content", 1, WorkflowFiles.MAX_BYTES);
            message = b.optionalText("message", 1, 4096).orElse(null);
        }
        if (content.isBlank()) {
            throw ApiException.badRequest("the workflow is empty");
        }
        if (content.indexOf('\0') >= 0) {
            throw ApiException.badRequest("text must not contain NUL (U+0000) characters");
        }
        boolean existed = store.workflow(repoId, p).isPresent();
        files.commit(caller, repo, p, content, message != null ? message : (existed ? "Update " : "Add ") + p);
        WorkflowOne out =
                new WorkflowOne(WorkflowOut.of(store.workflow(repoId, p).orElseThrow(), true));
        return Response.status(existed ? 200 : 201).entity(out).build();
    }

    @DELETE
    @Path("{path: .+}")
    @RequiresScope(WRITE)
    public ActionsJson.Deleted delete(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("path") String path) {
        Caller caller = Caller.from(sc);
        Repository repo = repositories.writable(caller, repoId);
        String p = find(repoId, path).path();
        files.commit(caller, repo, p, null, "Delete " + p);
        return new ActionsJson.Deleted(true);
    }

    @POST
    @Path("{path: .+}/sync")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    public WorkflowOne sync(
            @Context SecurityContext sc, @PathParam("repoId") String repoId, @PathParam("path") String path) {
        Repository repo = repositories.writable(Caller.from(sc), repoId);
        String p = WorkflowFiles.normalize(path);
        if (files.sync(repo, p).isEmpty()) {
            throw ApiException.notFound("the default branch has no workflow " + p);
        }
        return new WorkflowOne(WorkflowOut.of(store.workflow(repoId, p).orElseThrow(), true));
    }
}
