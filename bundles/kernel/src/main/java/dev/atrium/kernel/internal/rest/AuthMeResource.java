package dev.atrium.kernel.internal.rest;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.internal.domain.Principals;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code GET /api/auth/me}: the authenticated user, the same body as {@code GET /api/me}. */
@Component(service = AuthMeResource.class)
@KernelResource
@Path("/api/auth/me")
@Produces(MediaType.APPLICATION_JSON)
public class AuthMeResource {

    private final Principals principals;

    @Activate
    public AuthMeResource(@Reference Principals principals) {
        this.principals = principals;
    }

    @GET
    @JsonShape(KernelJson.Me.class)
    public Map<String, Object> me(@Context SecurityContext sc) {
        return MeResource.me(principals, Caller.from(sc)).toMe();
    }
}
