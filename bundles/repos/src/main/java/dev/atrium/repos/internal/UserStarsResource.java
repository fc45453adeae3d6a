package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.repos.internal.ExploreStore.Page;
import dev.atrium.repos.internal.RepositoryOwners.Owner;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/users/:username/stars}: the public repositories a user starred, newest star first. */
@Component(service = UserStarsResource.class)
@KernelResource
@Path("/api/users/{username}/stars")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class UserStarsResource {

    private final ExploreStore store;
    private final ExploreViews views;

    @Activate
    public UserStarsResource(@Reference ExploreStore store, @Reference ExploreViews views) {
        this.store = store;
        this.views = views;
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.ExplorePage.class)
    public Map<String, Object> stars(
            @Context UriInfo uri,
            @PathParam("username") String username,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        NulText.reject("username", username);
        PageRequest page = PageRequest.of(limit, null);
        Owner o = views.ownerOrUserNotFound(username);
        Page p = store.starredBy(o.principalId(), cursor, page.limit());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("repositories", views.items(p.items(), uri.getBaseUri()));
        body.put("next_cursor", p.nextCursor());
        body.put("limit", page.limit());
        return body;
    }
}
