package dev.atrium.identity.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.AuditLog;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.api.PrincipalDirectory;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Operator configuration of sign-in: {@code PUT /admin/identity/providers/:name} (an OpenID Connect provider),
 * {@code GET /admin/identity/providers}, and {@code POST /admin/identity/local-users} (what {@code ./atrium user add}
 * calls; a missing password is generated and returned once).
 */
@Component(service = IdentityAdminResource.class)
@KernelResource
@Path("/admin/identity")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@OperatorOnly
public class IdentityAdminResource {

    private final IdentityService identity;
    private final AuditLog audit;

    @Activate
    public IdentityAdminResource(@Reference IdentityService identity, @Reference AuditLog audit) {
        this.identity = identity;
        this.audit = audit;
    }

    @GET
    @Path("providers")
    @JsonShape(IdentityJson.Providers.class)
    public Map<String, Object> providers() {
        return Map.of("providers", identity.providers());
    }

    @PUT
    @Path("providers/{name}")
    @JsonShape(IdentityJson.OneProvider.class)
    public Map<String, Object> putProvider(
            @PathParam("name") String name, @JsonShape(IdentityJson.ProviderInput.class) JsonNode body) {
        JsonBody b = JsonBody.of(body);
        identity.putProvider(
                name,
                b.requiredString("issuer"),
                b.requiredString("client_id"),
                b.string("client_secret").orElse(null),
                b.string("scopes").orElse(null));
        audit.record(AuditLog.OPERATOR, "identity_provider_configured", name, b.requiredString("issuer"));
        return Map.of(
                "provider",
                identity.providers().stream()
                        .filter(p -> name.equals(p.get("name")))
                        .findFirst()
                        .orElseThrow());
    }

    @POST
    @Path("local-users")
    @JsonShape(IdentityJson.LocalUser.class)
    public Response addLocalUser(@JsonShape(IdentityJson.LocalUserInput.class) JsonNode body) {
        JsonBody b = JsonBody.of(body);
        String username = b.requiredString("username").trim();
        String password = b.string("password").orElse(null);
        boolean generated = password == null || password.isEmpty();
        if (generated) {
            password = Ids.random("", 20);
        }
        if (password.length() > 200) {
            throw ApiException.badRequest("the password is too long");
        }
        PrincipalDirectory.Entry e = identity.addLocalUser(username, password.toCharArray());
        audit.record(
                AuditLog.OPERATOR, "user_created", e.username(), generated ? "local, password generated" : "local");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user", Map.of("id", e.id(), "username", e.username()));
        if (generated) {
            m.put("password", password);
        }
        return Response.status(201).entity(m).build();
    }
}
