package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import java.util.Map;
import javax.ws.rs.Consumes;
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

/**
 * {@code /api/repos/:id/sync} and {@code /sync/status}: a repository and its upstream (see {@link UpstreamSync}; the
 * fetches are {@link ReposResource}'s). Only the owner syncs; a reader of a public repository reads its status.
 */
@Component(service = RepoSyncResource.class)
@KernelResource
@Path("/api/repos/{repoId}/sync")
@Produces(MediaType.APPLICATION_JSON)
public class RepoSyncResource {

    private final RepoAccess access;
    private final UpstreamSync sync;

    @Activate
    public RepoSyncResource(@Reference RepoAccess access, @Reference UpstreamSync sync) {
        this.access = access;
        this.sync = sync;
    }

    /** {@code {token?}}: fetches, then fast-forwards the branches that have not diverged from the upstream. */
    @POST
    @Consumes(MediaType.WILDCARD)
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Synced.class)
    public Map<String, Object> sync(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(RepoJson.FetchUpstream.class) String text) {
        Caller caller = Caller.from(sc);
        Repository r = access.writable(caller, repoId).repo();
        return sync.sync(caller, r, token(text));
    }

    @GET
    @Path("status")
    @RequiresScope("repos:read")
    @JsonShape(RepoJson.SyncStatus.class)
    public Map<String, Object> status(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
        Caller caller = Caller.from(sc);
        return sync.status(caller, access.readable(caller, repoId).repo());
    }

    static String token(String text) {
        JsonNode body = JsonBody.optional(text);
        return body == null
                ? null
                : JsonBody.of(body).optionalText("token", 1, 4096).orElse(null);
    }
}
