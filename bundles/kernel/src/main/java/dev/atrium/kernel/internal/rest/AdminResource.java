package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import dev.atrium.kernel.internal.domain.Workspaces;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The operator's user administration, used by {@code ./atrium token create}. */
@Component(service = AdminResource.class)
@KernelResource
@Path("/admin/users")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@OperatorOnly
public class AdminResource {

    private final Principals principals;
    private final Workspaces workspaces;
    private final PersonalAccessTokens tokens;

    @Activate
    public AdminResource(
            @Reference Principals principals,
            @Reference Workspaces workspaces,
            @Reference PersonalAccessTokens tokens) {
        this.principals = principals;
        this.workspaces = workspaces;
        this.tokens = tokens;
    }

    /** Creates the local Principal {@code username} with its default workspace, or returns the existing one. */
    @POST
    @JsonShape(KernelJson.UserAndSpace.class)
    public Response ensure(@JsonShape(KernelJson.UsernameInput.class) JsonNode body) {
        String username = MeResource.validUsername(JsonBody.of(body));
        Principals.Ensured ensured = principals.ensure(Principals.LOCAL_PROVIDER, username, username);
        return Response.status(ensured.created() ? 201 : 200)
                .entity(user(ensured.principal()))
                .build();
    }

    private Map<String, Object> user(PrincipalRecord p) {
        Map<String, Object> user = new LinkedHashMap<>();
        user.put("id", p.id());
        user.put("username", p.username());
        user.put("status", p.status());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user", user);
        m.put("space", workspaces.findDefault(p.id()).map(w -> w.toJson()).orElse(null));
        return m;
    }

    @POST
    @Path("{username}/tokens")
    @JsonShape(KernelJson.CreatedToken.class)
    public Response token(
            @PathParam("username") String username, @JsonShape(KernelJson.TokenInput.class) JsonNode body) {
        PrincipalRecord p = local(username);
        JsonBody b = JsonBody.of(
                body == null || body.isNull() || body.isMissingNode() ? JsonNodeFactory.instance.objectNode() : body);
        return Response.status(201)
                .entity(MeResource.createToken(tokens, p.id(), b, "cli").toJson())
                .build();
    }

    @POST
    @Path("{username}/suspend")
    @JsonShape(KernelJson.UserAndSpace.class)
    public Map<String, Object> suspend(@PathParam("username") String username) {
        local(username);
        principals.setStatus(username, "suspended");
        return user(local(username));
    }

    @POST
    @Path("{username}/activate")
    @JsonShape(KernelJson.UserAndSpace.class)
    public Map<String, Object> activate(@PathParam("username") String username) {
        local(username);
        principals.setStatus(username, "active");
        return user(local(username));
    }

    private PrincipalRecord local(String username) {
        return principals
                .byUsername(username)
                .orElseThrow(() -> ApiException.notFound("no user named '" + username + "'"));
    }
}
