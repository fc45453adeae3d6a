package dev.atrium.people.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code GET /api/users/:username/activity}: what the person did in public repositories, as the caller may see it. */
@Component(service = UserActivityResource.class)
@KernelResource
@Path("/api/users/{username}/activity")
@Produces(MediaType.APPLICATION_JSON)
public class UserActivityResource {

    private final People people;

    @Activate
    public UserActivityResource(@Reference People people) {
        this.people = people;
    }

    @GET
    @Anonymous
    @JsonShape(PeopleJson.Activity.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        PageRequest page = PageRequest.of(limit, offset);
        return people.activity(people.user(username), People.viewer(sc), page);
    }
}
