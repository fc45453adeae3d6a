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

/** {@code POST /api/users/:username/block} blocks the user: follows and follow requests between the two go, in both directions, and neither can follow the other while it stands; each is left out of the follow lists the other sees; {@code DELETE} undoes it. Both are idempotent. */
@Component(service = BlockResource.class)
@KernelResource
@Path("/api/users/{username}/block")
@Produces(MediaType.APPLICATION_JSON)
public class BlockResource {

    private final People people;

    @Activate
    public BlockResource(@Reference People people) {
        this.people = people;
    }

    @POST
    @JsonShape(PeopleJson.Blocking.class)
    public Map<String, Object> block(@Context SecurityContext sc, @PathParam("username") String username) {
        String me = Caller.from(sc).principalId();
        people.store.block(me, people.other(me, username, "block").principalId());
        return Map.of("blocking", true);
    }

    @DELETE
    @JsonShape(PeopleJson.Blocking.class)
    public Map<String, Object> unblock(@Context SecurityContext sc, @PathParam("username") String username) {
        String me = Caller.from(sc).principalId();
        people.store.unblock(me, people.other(me, username, "block").principalId());
        return Map.of("blocking", false);
    }
}
