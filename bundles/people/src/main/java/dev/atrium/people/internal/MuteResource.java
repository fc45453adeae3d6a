package dev.atrium.people.internal;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import java.util.Map;
import javax.ws.rs.DELETE;
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

/** {@code POST /api/users/:username/mute} mutes the user: their activity is left out of what the caller sees, and only that; {@code DELETE} undoes it. Both are idempotent. */
@Component(service = MuteResource.class)
@KernelResource
@Path("/api/users/{username}/mute")
@Produces(MediaType.APPLICATION_JSON)
public class MuteResource {

    private final People people;

    @Activate
    public MuteResource(@Reference People people) {
        this.people = people;
    }

    @POST
    @JsonShape(PeopleJson.Muting.class)
    public Map<String, Object> mute(@Context SecurityContext sc, @PathParam("username") String username) {
        String me = Caller.from(sc).principalId();
        people.store.mute(me, people.other(me, username, "mute").principalId());
        return Map.of("muting", true);
    }

    @DELETE
    @JsonShape(PeopleJson.Muting.class)
    public Map<String, Object> unmute(@Context SecurityContext sc, @PathParam("username") String username) {
        String me = Caller.from(sc).principalId();
        people.store.unmute(me, people.other(me, username, "mute").principalId());
        return Map.of("muting", false);
    }
}
