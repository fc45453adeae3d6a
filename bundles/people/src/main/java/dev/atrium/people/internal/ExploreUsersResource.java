package dev.atrium.people.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code GET /api/explore/users}: people with a public profile, by username, found by a part of their username or name. */
@Component(service = ExploreUsersResource.class)
@KernelResource
@Path("/api/explore/users")
@Produces(MediaType.APPLICATION_JSON)
public class ExploreUsersResource {

    private final People people;

    @Activate
    public ExploreUsersResource(@Reference People people) {
        this.people = people;
    }

    @GET
    @Anonymous
    @JsonShape(PeopleJson.Users.class)
    public Map<String, Object> list(
            @QueryParam("q") String q, @QueryParam("limit") String limit, @QueryParam("offset") String offset) {
        PageRequest page = PageRequest.of(limit, offset);
        if (q != null && q.length() > 100) {
            throw ApiException.badRequest("q must be at most 100 characters");
        }
        List<Map<String, Object>> users = people.profiles.search(q, page.limit(), page.offset()).stream()
                .map(People::summary)
                .toList();
        return page.body("users", users, people.profiles.count(q));
    }
}
