package dev.atrium.sessions.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
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
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/spaces/:spaceId/sessions}: starts a file-sync session on a repository of the workspace ({@code POST},
 * the spec's) and lists the workspace's sessions ({@code GET}, an extension), proven through the kernel's
 * {@link OwnerScope} first.
 */
@Component(service = SpaceSessionsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/sessions")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceSessionsResource {

    private static final Set<String> FIELDS = Set.of("repo", "branch", "idle_timeout_s");
    private static final Set<String> STATES = Set.of("active", "stopped", "discarded", "expired");

    private final OwnerScope ownerScope;
    private final SyncSessions sessions;

    @Activate
    public SpaceSessionsResource(@Reference OwnerScope ownerScope, @Reference SyncSessions sessions) {
        this.ownerScope = ownerScope;
        this.sessions = sessions;
    }

    /** The workspace's sessions, newest first; {@code state} keeps those in one state. */
    @GET
    @RequiresScope("repos:read")
    @JsonShape(SessionJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("state") String state,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (state != null && !STATES.contains(state)) {
            throw ApiException.badRequest("state must be one of active, discarded, expired, stopped");
        }
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "sessions",
                sessions.list(space.id(), state, page.limit(), page.offset()),
                sessions.count(space.id(), state));
    }

    @POST
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.One.class)
    public Response start(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(SessionJson.Start.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("the body must be a JSON object: {repo, branch?, idle_timeout_s?}");
        }
        NulText.reject(body);
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                throw ApiException.badRequest("unknown field " + name + ": a start takes repo, branch, idle_timeout_s");
            }
        }
        JsonBody b = JsonBody.of(body);
        String repo = b.text("repo", 1, 200);
        String branch = b.optionalText("branch", 1, 200).orElse(null);
        Duration idle = sessions.defaultIdle();
        JsonNode timeout = body.get("idle_timeout_s");
        if (timeout != null && !timeout.isNull()) {
            long max = sessions.maxIdle().toSeconds();
            if (!timeout.isIntegralNumber()
                    || !timeout.canConvertToLong()
                    || timeout.asLong() < 1
                    || timeout.asLong() > max) {
                throw ApiException.badRequest("idle_timeout_s must be a whole number from 1 to " + max);
            }
            idle = Duration.ofSeconds(timeout.asLong());
        }
        return Response.status(201)
                .entity(Map.of("session", sessions.toJson(sessions.start(caller, space, repo, branch, idle))))
                .build();
    }
}
