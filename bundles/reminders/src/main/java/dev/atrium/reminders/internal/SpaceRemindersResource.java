package dev.atrium.reminders.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.reminders.internal.ReminderStore.Reminder;
import java.time.Instant;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/spaces/:spaceId/reminders}: every route proves ownership through the kernel's {@link OwnerScope} first. */
@Component(service = SpaceRemindersResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/reminders")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceRemindersResource {

    private final OwnerScope ownerScope;
    private final ReminderStore store;

    @Activate
    public SpaceRemindersResource(@Reference OwnerScope ownerScope, @Reference ReminderStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(ReminderJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "reminders",
                store.list(space.id(), page.limit(), page.offset()).stream()
                        .map(Reminder::toJson)
                        .toList(),
                store.count(space.id()));
    }

    @POST
    @RequiresScope("threads:write")
    @JsonShape(ReminderJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(ReminderJson.Input.class) JsonNode body) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        ReminderInput in = ReminderInput.create(body, Instant.now());
        Reminder created = store.create(space.id(), in.title(), in.body(), in.schedule(), in.enabled(), in.run());
        return Response.status(201).entity(Map.of("reminder", created.toJson())).build();
    }
}
