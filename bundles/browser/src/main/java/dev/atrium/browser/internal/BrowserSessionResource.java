package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
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
 * {@code /api/browser-sessions/:id}: a session addressed by its own id is resolved to the workspace it was started in
 * and proven through the kernel's {@link OwnerScope} before anything else, so another Principal's session is the same
 * 404 as a missing one (or one that ended, or one another server started).
 */
@Component(service = BrowserSessionResource.class)
@KernelResource
@Path("/api/browser-sessions/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class BrowserSessionResource {

    static final Set<String> EXTRACT_KINDS = Set.of("text", "links", "table", "accessibility");
    static final int MAX_URL = 8_192;
    static final int DEFAULT_NAVIGATION_MS = 30_000;

    private final OwnerScope ownerScope;
    private final BrowserSessions sessions;

    @Activate
    public BrowserSessionResource(@Reference OwnerScope ownerScope, @Reference BrowserSessions sessions) {
        this.ownerScope = ownerScope;
        this.sessions = sessions;
    }

    private BrowserSession owned(SecurityContext sc, String id) {
        BrowserSession session = sessions.find(id).orElseThrow(BrowserSessions::notFound);
        try {
            ownerScope.require(Caller.from(sc), session.spaceId);
        } catch (ApiException e) {
            // the kernel's answer names the workspace; a stranger must get exactly what a missing id gets
            throw e.status() == 404 ? BrowserSessions.notFound() : e;
        }
        return session;
    }

    @GET
    @RequiresScope("runs:read")
    @JsonShape(BrowserJson.OneSession.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        return Map.of("browser_session", owned(sc, id).toJson());
    }

    @DELETE
    @RequiresScope("runs:write")
    @JsonShape(BrowserJson.Ended.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!sessions.end(owned(sc, id).id, "deleted")) {
            throw BrowserSessions.notFound();
        }
        return Map.of("success", true);
    }

    @POST
    @Path("goto")
    @RequiresScope("runs:write")
    @JsonShape(BrowserJson.Navigated.class)
    public Map<String, Object> navigate(
            @Context SecurityContext sc, @PathParam("id") String id, @JsonShape(BrowserJson.Goto.class) JsonNode body) {
        BrowserSession session = owned(sc, id);
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("a JSON object body is required");
        }
        BrowserAction.rejectUnknown(body, Set.of("url", "timeout_ms"));
        String url = BrowserAction.string(body, "url", MAX_URL);
        if (url == null || url.isBlank()) {
            throw ApiException.badRequest("url is required");
        }
        int timeout = body.hasNonNull("timeout_ms") ? BrowserAction.timeoutMs(body) : DEFAULT_NAVIGATION_MS;
        return session.navigate(url.trim(), timeout);
    }

    @POST
    @Path("action")
    @RequiresScope("runs:write")
    @JsonShape(BrowserJson.Acted.class)
    public Map<String, Object> action(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(BrowserJson.Action.class) JsonNode body) {
        BrowserSession session = owned(sc, id);
        return session.act(BrowserAction.parse(body));
    }

    @POST
    @Path("extract")
    @RequiresScope("runs:write")
    @JsonShape(BrowserJson.Extracted.class)
    public Map<String, Object> extract(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(BrowserJson.Extract.class) JsonNode body) {
        BrowserSession session = owned(sc, id);
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("a JSON object body is required");
        }
        BrowserAction.rejectUnknown(body, Set.of("kind", "selector", "role", "name"));
        String kind = BrowserAction.string(body, "kind", 40);
        if (kind == null || !EXTRACT_KINDS.contains(kind)) {
            throw ApiException.badRequest("kind must be one of " + BrowserAction.sorted(EXTRACT_KINDS));
        }
        BrowserAction.Target target = BrowserAction.target(body);
        Object extracted = session.extract(kind, target);
        Map<String, Object> answer = new java.util.LinkedHashMap<>();
        answer.put("kind", kind);
        if (extracted instanceof Map<?, ?> m) {
            m.forEach((k, v) -> answer.put(String.valueOf(k), v));
        }
        return answer;
    }

    @GET
    @Path("html")
    @Produces({"text/html", MediaType.APPLICATION_JSON})
    @NotJson("text/html")
    @RequiresScope("runs:read")
    public Response html(@Context SecurityContext sc, @PathParam("id") String id) {
        return Response.ok(owned(sc, id).html(), "text/html; charset=utf-8").build();
    }

    @GET
    @Path("screenshot")
    @Produces({"image/png", MediaType.APPLICATION_JSON})
    @NotJson("image/png")
    @RequiresScope("runs:read")
    public Response screenshot(
            @Context SecurityContext sc, @PathParam("id") String id, @QueryParam("full_page") String fullPage) {
        BrowserSession session = owned(sc, id);
        boolean full;
        if (fullPage == null || fullPage.equals("false")) {
            full = false;
        } else if (fullPage.equals("true")) {
            full = true;
        } else {
            throw ApiException.badRequest("full_page must be true or false");
        }
        return Response.ok(session.screenshot(full), "image/png").build();
    }

    @POST
    @Path("pdf")
    @Consumes(MediaType.WILDCARD)
    @Produces({"application/pdf", MediaType.APPLICATION_JSON})
    @NotJson("application/pdf")
    @RequiresScope("runs:write")
    public Response pdf(@Context SecurityContext sc, @PathParam("id") String id) {
        return Response.ok(owned(sc, id).pdf(), "application/pdf").build();
    }
}
