package dev.atrium.reminders.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.reminders.internal.ReminderStore.Reminder;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/reminders/:id}: a reminder addressed by its own id is resolved to its workspace and proven through the
 * kernel's {@link OwnerScope}, so another Principal's reminder is the same 404 as a missing one.
 */
@Component(service = ReminderResource.class)
@KernelResource
@Path("/api/reminders/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ReminderResource {

    private static final String NOT_FOUND = "reminder not found";

    private final OwnerScope ownerScope;
    private final ReminderStore store;
    private final ReminderFiring firing;

    @Activate
    public ReminderResource(
            @Reference OwnerScope ownerScope, @Reference ReminderStore store, @Reference ReminderFiring firing) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.firing = firing;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(ReminderJson.One.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        return Map.of("reminder", owned(Caller.from(sc), id).reminder().toJson());
    }

    @PATCH
    @RequiresScope("threads:write")
    @JsonShape(ReminderJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ReminderJson.Input.class) JsonNode body) {
        Reminder current = owned(Caller.from(sc), id).reminder();
        ReminderInput in = ReminderInput.patch(body, current, Instant.now());
        return Map.of(
                "reminder",
                store.update(current.id(), in.title(), in.body(), in.schedule(), in.enabled(), in.run())
                        .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                        .toJson());
    }

    @DELETE
    @RequiresScope("threads:write")
    @JsonShape(ReminderJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!store.delete(owned(Caller.from(sc), id).reminder().id())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    /**
     * Fires now, whatever the schedule says (which stays as it is); answers the reminder, the notification's id and the
     * run's id (or why it could not start).
     */
    @POST
    @Path("trigger")
    @RequiresScope("threads:write")
    @JsonShape(ReminderJson.Triggered.class)
    public Map<String, Object> trigger(@Context SecurityContext sc, @PathParam("id") String id) {
        Owned owned = owned(Caller.from(sc), id);
        Reminder fired = store.recordTrigger(owned.reminder().id()).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        ReminderFiring.Fired outcome = firing.fire(fired, owned.space().ownerPrincipalId(), true);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                "reminder",
                outcome.runId() == null
                        ? fired.toJson()
                        : store.get(fired.id()).orElse(fired).toJson());
        m.put("notification_id", outcome.notificationId());
        m.put("run_id", outcome.runId());
        m.put("run_error", outcome.runError());
        return m;
    }

    private record Owned(Reminder reminder, SpaceRef space) {}

    private Owned owned(Caller caller, String id) {
        Reminder reminder = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            return new Owned(reminder, ownerScope.require(caller, reminder.spaceId()));
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
    }
}
