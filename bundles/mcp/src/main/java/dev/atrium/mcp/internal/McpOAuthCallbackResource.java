package dev.atrium.mcp.internal;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtensionSelect;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsResource;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.KernelExtensions;

/**
 * {@code GET /api/mcp/oauth/callback}: where the authorization server sends the user's browser back (no authentication:
 * the single-use, expiring {@code state} is the proof, and it is bound to the server, its workspace and its Principal;
 * a signed-in caller other than that Principal is refused).
 */
@Component(service = McpOAuthCallbackResource.class)
@JaxrsResource
@JaxrsExtensionSelect({ KernelExtensions.SELECT, KernelExtensions.JSON })
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
    public Map<String, Object> callback(@Context SecurityContext sc, @QueryParam("state") String state, @QueryParam("code") String code,
            @QueryParam("error") String error) {
        Caller signedIn = sc != null && sc.getUserPrincipal() instanceof Caller c ? c : null;
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
        return m;
    }
}
