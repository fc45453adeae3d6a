package dev.atrium.store.ap.core.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The operator's view of outgoing federation: {@code GET /admin/federation/deliveries[?state=pending|delivered|dead][&limit=]}
 * and {@code POST /admin/federation/deliveries/:id/retry} (a dead letter only).
 */
@Component(service = FederationAdmin.class)
@KernelResource
@Path("/admin/federation/deliveries")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class FederationAdmin {

    private static final Set<String> STATES = Set.of("pending", "delivered", "dead");
    private final DeliveryQueue queue;

    @Activate
    public FederationAdmin(@Reference DeliveryQueue queue) {
        this.queue = queue;
    }

    @GET
    @JsonShape(StoreJson.Deliveries.class)
    public Map<String, Object> list(@QueryParam("state") String state, @QueryParam("limit") String limit) {
        if (state != null && !STATES.contains(state)) {
            throw ApiException.badRequest("state must be one of pending, delivered, dead");
        }
        int n = 50;
        if (limit != null) {
            try {
                n = Integer.parseInt(limit.trim());
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("limit must be a whole number from 1 to 500");
            }
            if (n < 1 || n > 500) {
                throw ApiException.badRequest("limit must be a whole number from 1 to 500");
            }
        }
        return Map.of("deliveries", queue.list(state, n));
    }

    @POST
    @Path("{id}/retry")
    @JsonShape(StoreJson.Success.class)
    public Map<String, Object> retry(@PathParam("id") String id) {
        if (queue.retry(id)) {
            return Map.of("success", true);
        }
        if (!queue.exists(id)) {
            throw ApiException.notFound("delivery not found");
        }
        throw ApiException.conflict("only a dead letter can be retried; this delivery is not one");
    }
}
