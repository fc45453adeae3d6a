package dev.atrium.mcp.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
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
 * {@code GET /api/mcp/oauth/callback}: where the authorization server sends the user's browser back. The route takes no
 * authentication (spec), but the authorization only completes for a request signed in as the Principal who began it:
 * a browser without a session is sent to sign in and comes back here, so a link to the authorization server that
 * someone else began cannot attach that person's MCP server to the account of whoever follows it.
 */
@Component(service = McpOAuthCallbackResource.class)
@KernelResource
@Path(McpOAuthCallbackResource.PATH)
@Produces(MediaType.APPLICATION_JSON)
public class McpOAuthCallbackResource {

    static final String PATH = "/api/mcp/oauth/callback";

    private final McpOAuth oauth;

    @Activate
    public McpOAuthCallbackResource(@Reference McpOAuth oauth) {
        this.oauth = oauth;
    }

    @GET
    @Anonymous
    @JsonShape(McpJson.Connected.class)
    public Response callback(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @QueryParam("state") String state,
            @QueryParam("code") String code,
            @QueryParam("error") String error) {
        Caller signedIn = sc != null && sc.getUserPrincipal() instanceof Caller c && c.principalId() != null ? c : null;
        if (signedIn == null) {
            oauth.requirePending(state);
            String back = PATH + "?" + uri.getRequestUri().getRawQuery();
            return Response.status(302)
                    .header("Location", "/auth/login?return_to=" + URLEncoder.encode(back, StandardCharsets.UTF_8))
                    .build();
        }
        McpOAuth.Completed done;
        try {
            done = oauth.complete(state, code, error, signedIn);
        } catch (IOException e) {
            throw new ApiException(502, "BAD_GATEWAY", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("the server is stopping");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("success", true);
        m.put("server_id", done.serverId());
        m.put("space_id", done.spaceId());
        return Response.ok(m).build();
    }
}
