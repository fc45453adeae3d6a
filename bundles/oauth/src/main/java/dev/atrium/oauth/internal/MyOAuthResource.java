package dev.atrium.oauth.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
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
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A user's side of OAuth: the clients they own ({@code /api/me/oauth/clients}), the apps they consented to, and the
 * audit log of every grant, refresh, revocation, reuse detection and consent change.
 */
@Component(service = MyOAuthResource.class)
@KernelResource
@Path("/api/me/oauth")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class MyOAuthResource {

    private final OAuthServer server;

    @Activate
    public MyOAuthResource(@Reference OAuthServer server) {
        this.server = server;
    }

    private static Caller user(SecurityContext sc) {
        Caller caller = Caller.from(sc);
        Signin.requireFullAccess(caller);
        return caller;
    }

    @GET
    @Path("clients")
    @JsonShape(OAuthJson.Clients.class)
    public Map<String, Object> clients(@Context SecurityContext sc) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Client c : server.owned(user(sc).principalId())) {
            out.add(c.toJson());
        }
        return Map.of("clients", out);
    }

    @POST
    @Path("clients")
    @JsonShape(OAuthJson.OneRegistered.class)
    public Response create(
            @Context SecurityContext sc, @Context UriInfo uri, @JsonShape(OAuthJson.ClientInput.class) JsonNode body) {
        Caller caller = user(sc);
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("the body must be a JSON object");
        }
        OAuthClients.ClientSpec spec = OAuthEndpoints.spec(body, ApiException::badRequest, false);
        OAuthClients.checkSpec(spec, ApiException::badRequest);
        Map<String, Object> client =
                server.register(caller.principalId(), spec, false).toJson(server.issuer(uri.getBaseUri()));
        return Response.status(201).entity(Map.of("client", client)).build();
    }

    @PATCH
    @Path("clients/{clientId}")
    @JsonShape(OAuthJson.OneClient.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("clientId") String clientId,
            @JsonShape(OAuthJson.ClientInput.class) JsonNode body) {
        Caller caller = user(sc);
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("the body must be a JSON object");
        }
        OAuthClients.ClientSpec given = OAuthEndpoints.spec(body, ApiException::badRequest, false);
        String name = body.has("client_name") ? given.name() : null;
        List<String> uris = body.has("redirect_uris") ? given.redirectUris() : null;
        Set<String> scopes = body.has("scope") || body.has("scopes") ? given.scopes() : null;
        String clientUri = body.has("client_uri") ? given.clientUri() : null;
        String logoUri = body.has("logo_uri") ? given.logoUri() : null;
        List<String> postLogout = body.has("post_logout_redirect_uris") ? given.postLogoutRedirectUris() : null;
        return Map.of(
                "client",
                server.update(caller.principalId(), clientId, name, uris, scopes, clientUri, logoUri, postLogout)
                        .toJson());
    }

    @DELETE
    @Path("clients/{clientId}")
    @JsonShape(OAuthJson.Success.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("clientId") String clientId) {
        server.delete(user(sc).principalId(), clientId);
        return Map.of("success", true);
    }

    @GET
    @Path("consents")
    @JsonShape(OAuthJson.Consents.class)
    public Map<String, Object> consents(@Context SecurityContext sc) {
        return Map.of("consents", server.consents(user(sc).principalId()));
    }

    @DELETE
    @Path("consents/{clientId}")
    @JsonShape(OAuthJson.Success.class)
    public Map<String, Object> revokeConsent(@Context SecurityContext sc, @PathParam("clientId") String clientId) {
        if (!server.revokeConsent(user(sc).principalId(), clientId)) {
            throw ApiException.notFound("no consent for this client");
        }
        return Map.of("success", true);
    }

    @GET
    @Path("audit-logs")
    @JsonShape(OAuthJson.AuditLogs.class)
    public Map<String, Object> audit(
            @Context SecurityContext sc, @QueryParam("limit") String limit, @QueryParam("offset") String offset) {
        String me = user(sc).principalId();
        PageRequest page = PageRequest.of(limit, offset);
        Map<String, Object> body = new LinkedHashMap<>(
                page.body("logs", server.auditLogs(me, page.limit(), page.offset()), server.auditCount(me)));
        return body;
    }
}
