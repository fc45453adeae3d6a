package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code POST /api/spaces/:spaceId/browser-sessions}: starts a headless Chromium for the workspace, proven through the
 * kernel's {@link OwnerScope} first. Past the Principal's or the server's cap: 429 {@code RATE_LIMITED} with
 * {@code Retry-After}.
 */
@Component(service = SpaceBrowserSessionsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/browser-sessions")
@Produces(MediaType.APPLICATION_JSON)
public class SpaceBrowserSessionsResource {

    static final int DEFAULT_WIDTH = 1280;
    static final int DEFAULT_HEIGHT = 800;

    private final OwnerScope ownerScope;
    private final BrowserSessions sessions;

    @Activate
    public SpaceBrowserSessionsResource(@Reference OwnerScope ownerScope, @Reference BrowserSessions sessions) {
        this.ownerScope = ownerScope;
        this.sessions = sessions;
    }

    @POST
    @RequiresScope("runs:write")
    @JsonShape(BrowserJson.OneSession.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(BrowserJson.NewSession.class) String text) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        JsonNode body = JsonBody.optional(text);
        int width = DEFAULT_WIDTH;
        int height = DEFAULT_HEIGHT;
        Duration idle = sessions.maxIdle();
        if (body != null) {
            if (!body.isObject()) {
                throw ApiException.badRequest("the body must be a JSON object");
            }
            BrowserAction.rejectUnknown(body, Set.of("width", "height", "idle_timeout_seconds"));
            width = whole(body, "width", BrowserSessions.MIN_SIDE, BrowserSessions.MAX_WIDTH, width);
            height = whole(body, "height", BrowserSessions.MIN_SIDE, BrowserSessions.MAX_HEIGHT, height);
            idle = Duration.ofSeconds(whole(
                    body, "idle_timeout_seconds", 1, (int) sessions.maxIdle().toSeconds(), (int) idle.toSeconds()));
        }
        BrowserSession session;
        try {
            session = sessions.start(caller.principalId(), space.id(), width, height, idle);
        } catch (BrowserSessions.CapReached refused) {
            // the kernel's error mapper sets no headers, so the spec's error body is built here with Retry-After
            return Response.status(429)
                    .type(MediaType.APPLICATION_JSON_TYPE)
                    .header("Retry-After", Long.toString(refused.retryAfterSeconds))
                    .entity(ApiException.body("RATE_LIMITED", refused.getMessage()))
                    .build();
        }
        return Response.status(201)
                .entity(Map.of("browser_session", session.toJson()))
                .build();
    }

    static int whole(JsonNode body, String field, int min, int max, int fallback) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isIntegralNumber() || v.asLong() < min || v.asLong() > max) {
            throw ApiException.badRequest(field + " must be a whole number from " + min + " to " + max);
        }
        return v.asInt();
    }
}
