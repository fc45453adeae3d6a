package dev.atrium.people.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicProfiles.Profile;
import java.util.List;
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

/**
 * {@code GET /api/users/:username/followers}: newest first. People on either side of a block with the caller are left
 * out of what the caller sees.
 */
@Component(service = FollowersResource.class)
@KernelResource
@Path("/api/users/{username}/followers")
@Produces(MediaType.APPLICATION_JSON)
public class FollowersResource {

    private final People people;

    @Activate
    public FollowersResource(@Reference People people) {
        this.people = people;
    }

    @GET
    @Anonymous
    @JsonShape(PeopleJson.Followers.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        PageRequest page = PageRequest.of(limit, offset);
        Profile p = people.user(username);
        String viewer = People.viewer(sc);
        List<Map<String, Object>> items = new java.util.ArrayList<>();
        for (PeopleStore.Related r : people.store.related(p.principalId(), true, viewer, page.limit(), page.offset())) {
            people.profiles.byId(r.principalId()).ifPresent(other -> {
                Map<String, Object> m = People.summary(other);
                m.put("followed_at", People.time(r.since()));
                items.add(m);
            });
        }
        return page.body("followers", items, people.store.countRelated(p.principalId(), true, viewer));
    }
}
