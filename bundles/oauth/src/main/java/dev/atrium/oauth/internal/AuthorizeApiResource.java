package dev.atrium.oauth.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The consent and device decisions for a single-page app: {@code /api/oauth/authorize/context|decision} and
 * {@code /api/oauth/device/context|decision}. Deciding needs a browser session (with its CSRF token) or a personal
 * access token with {@code *}.
 */
@Component(service = AuthorizeApiResource.class)
@KernelResource
@Path("/api/oauth")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class AuthorizeApiResource {

    private final OAuthServer server;

    @Activate
    public AuthorizeApiResource(@Reference OAuthServer server) {
        this.server = server;
    }

    @GET
    @Path("authorize/context")
    @JsonShape(OAuthJson.AuthorizeContext.class)
    public Map<String, Object> context(@Context SecurityContext sc, @Context UriInfo uri) {
        Signin.requireFullAccess(Caller.from(sc));
        Map<String, String> query;
        try {
            query = Requests.query(uri);
        } catch (OAuthError e) {
            throw ApiException.badRequest(e.error + ": " + e.getMessage());
        }
        Authorizations.AuthorizeRequest r = check(query);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("client", clientJson(r.client()));
        m.put("scopes", scopesJson(r.scopes()));
        m.put("redirect_uri", r.redirectUri());
        m.put("state", r.state());
        return m;
    }

    @POST
    @Path("authorize/decision")
    @JsonShape(OAuthJson.Redirect.class)
    public Map<String, Object> decision(
            @Context SecurityContext sc, @JsonShape(OAuthJson.AuthorizeDecision.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Signin.requireFullAccess(caller);
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("the body must be a JSON object");
        }
        boolean approve = JsonBody.of(body)
                .bool("approve")
                .orElseThrow(() -> ApiException.badRequest("approve (boolean) is required"));
        Map<String, String> params = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isTextual()) {
                params.put(e.getKey(), e.getValue().asText());
            }
        }
        Authorizations.AuthorizeRequest r;
        try {
            r = server.checkAuthorize(params);
        } catch (Authorizations.RedirectError e) {
            return Map.of("redirect_to", e.location());
        } catch (OAuthError e) {
            throw ApiException.badRequest(e.error + ": " + e.getMessage());
        }
        String location = approve ? server.approve(caller, r) : server.deny(caller.principalId(), r);
        return Map.of("redirect_to", location);
    }

    @GET
    @Path("device/context")
    @JsonShape(OAuthJson.DeviceContext.class)
    public Map<String, Object> deviceContext(@Context SecurityContext sc, @QueryParam("user_code") String userCode) {
        Signin.requireFullAccess(Caller.from(sc));
        if (userCode == null || userCode.isBlank()) {
            throw ApiException.badRequest("user_code is required");
        }
        DeviceFlow.DeviceRow row = server.pendingDevice(userCode);
        Client client = server.client(row.clientId())
                .orElseThrow(() -> ApiException.notFound("no pending device request has this code"));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user_code", row.userCode());
        m.put("client", clientJson(client));
        m.put("scopes", scopesJson(row.scopes()));
        m.put("expires_at", row.expiresAt().toString());
        return m;
    }

    @POST
    @Path("device/decision")
    @JsonShape(OAuthJson.DeviceDecision.class)
    public Map<String, Object> deviceDecision(
            @Context SecurityContext sc, @JsonShape(OAuthJson.DeviceDecisionInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Signin.requireFullAccess(caller);
        JsonBody b = JsonBody.of(body);
        String userCode = b.requiredString("user_code");
        boolean approve = b.bool("approve").orElseThrow(() -> ApiException.badRequest("approve (boolean) is required"));
        server.decideDevice(caller, userCode, approve);
        return Map.of("status", approve ? "approved" : "denied");
    }

    private Authorizations.AuthorizeRequest check(Map<String, String> params) {
        try {
            return server.checkAuthorize(params);
        } catch (OAuthError e) {
            throw ApiException.badRequest(e.error + ": " + e.getMessage());
        } catch (Authorizations.RedirectError e) {
            throw ApiException.badRequest(e.error + ": " + e.getMessage());
        }
    }

    static Map<String, Object> clientJson(Client c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("client_id", c.clientId());
        m.put("client_name", c.name());
        m.put("client_uri", c.clientUri());
        m.put("logo_uri", c.logoUri());
        return m;
    }

    static List<Map<String, Object>> scopesJson(Set<String> scopes) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String s : scopes) {
            out.add(Map.of("name", s, "description", ScopeSet.KNOWN.getOrDefault(s, s)));
        }
        return out;
    }
}
