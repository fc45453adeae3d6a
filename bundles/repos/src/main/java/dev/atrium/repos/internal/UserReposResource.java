package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.repos.internal.ExploreStore.Filter;
import dev.atrium.repos.internal.ExploreStore.Page;
import dev.atrium.repos.internal.ExploreStore.Sort;
import dev.atrium.repos.internal.RepositoryOwners.Owner;
import java.util.LinkedHashMap;
import java.util.List;
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

/**
 * {@code /api/users/:username/repos}: a user's public repositories (those of the workspace the name stands for, as in
 * Git's {@code /git/:owner/:repo.git}). The root path is the full literal one, so the people bundle's
 * {@code /api/users/:username/...} routes stay theirs.
 */
@Component(service = UserReposResource.class)
@KernelResource
@Path("/api/users/{username}/repos")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class UserReposResource {

    private final ExploreStore store;
    private final ExploreViews views;

    @Activate
    public UserReposResource(@Reference ExploreStore store, @Reference ExploreViews views) {
        this.store = store;
        this.views = views;
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.ExplorePage.class)
    public Map<String, Object> repos(
            @Context UriInfo uri,
            @PathParam("username") String username,
            @QueryParam("q") String q,
            @QueryParam("sort") String sort,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        NulText.reject("username", username);
        String query = ExploreReposResource.text("q", q, ExploreReposResource.MAX_QUERY);
        PageRequest page = PageRequest.of(limit, null);
        Sort s = Sort.parse(sort == null ? "updated" : sort, query != null);
        Owner o = views.ownerOrUserNotFound(username);
        Page p = store.list(new Filter(query, null, List.of(o.space().id()), false), s, cursor, page.limit());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("repositories", views.items(p.items(), uri.getBaseUri()));
        body.put("next_cursor", p.nextCursor());
        body.put("limit", page.limit());
        return body;
    }
}
