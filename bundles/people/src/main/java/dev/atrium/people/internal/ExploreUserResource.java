package dev.atrium.people.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PublicProfiles.Profile;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code GET /api/explore/users/:username}: a profile with its public repositories. */
@Component(service = ExploreUserResource.class)
@KernelResource
@Path("/api/explore/users/{username}")
@Produces(MediaType.APPLICATION_JSON)
public class ExploreUserResource {

    private final People people;

    @Activate
    public ExploreUserResource(@Reference People people) {
        this.people = people;
    }

    @GET
    @Anonymous
    @JsonShape(PeopleJson.UserWithRepos.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("username") String username) {
        Profile p = people.user(username);
        return Map.of(
                "user",
                people.profile(p, People.viewer(sc)),
                "repositories",
                people.publicRepositories(p.principalId()).stream()
                        .map(r -> People.repository(r, p.username()))
                        .toList());
    }
}
