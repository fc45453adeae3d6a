package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.internal.domain.Names;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** First-run setup of a Principal: choosing a username. */
@Component(service = SetupResource.class)
@KernelResource
@Path("/api/setup")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SetupResource {

    private final Principals principals;

    @Activate
    public SetupResource(@Reference Principals principals) {
        this.principals = principals;
    }

    @GET
    @Path("status")
    @JsonShape(KernelJson.SetupStatus.class)
    public Map<String, Object> status(@Context SecurityContext sc) {
        return status(MeResource.me(principals, Caller.from(sc)));
    }

    private static Map<String, Object> status(PrincipalRecord p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("setup_completed", p.setupCompleted());
        m.put("username", p.username());
        return m;
    }

    @POST
    @Path("complete")
    @JsonShape(KernelJson.SetupStatus.class)
    public Map<String, Object> complete(
            @Context SecurityContext sc, @JsonShape(KernelJson.UsernameInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        String username = MeResource.validUsername(JsonBody.of(body));
        return status(principals.rename(caller.principalId(), username, true));
    }

    @POST
    @Path("check-username")
    @JsonShape(KernelJson.UsernameCheck.class)
    public Map<String, Object> check(
            @Context SecurityContext sc, @JsonShape(KernelJson.UsernameInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        String username = JsonBody.of(body).requiredString("username").trim();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("username", username);
        String problem = Names.formProblem("username", username, 3, 39);
        if (problem == null && !principals.usernameAvailable(username, caller.principalId())) {
            problem = "username '" + username + "' is already taken";
        }
        m.put("available", problem == null);
        m.put("reason", problem);
        return m;
    }
}
