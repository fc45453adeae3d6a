package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import javax.ws.rs.Consumes;
import javax.ws.rs.HeaderParam;
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
 * {@code POST /api/workers/:id/deployments}: the spec's lower-level deploy path. A worker is a service ({@code :id} is
 * the service id); the body, the Idempotency-Key and the answers are those of {@code POST /api/services/:id/deployments}.
 */
@Component(service = WorkersApi.class)
@KernelResource
@Path("/api/workers")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class WorkersApi {

    private final ServicesApi services;
    private final DeployFlow flow;

    @Activate
    public WorkersApi(@Reference ServicesApi services, @Reference DeployFlow flow) {
        this.services = services;
        this.flow = flow;
    }

    @POST
    @Path("{id}/deployments")
    @RequiresScope(ServicesApi.WRITE)
    @JsonShape(ServiceJson.OneDeployment.class)
    public Response deploy(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @HeaderParam("Idempotency-Key") String key,
            @JsonShape(ServiceJson.DeployInput.class) JsonNode body) {
        JsonBody.of(body);
        return flow.create(services.owned(Caller.from(sc), id), body, key);
    }
}
