package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.repos.internal.ExploreStore.Filter;
import dev.atrium.repos.internal.ExploreStore.Page;
import dev.atrium.repos.internal.ExploreStore.Sort;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/explore/catalog} and the type-ahead suggestions: the server's catalog is the public repositories their
 * owners marked for it ({@code PATCH /api/repos/:id} with {@code catalog: true}); suggestions are a name prefix then
 * trigram likeness, at most ten.
 */
@Component(service = ExploreCatalogResource.class)
@KernelResource
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@Path("/api/explore/catalog")
public class ExploreCatalogResource {

    static final int MOST_SUGGESTIONS = 10;

    private final ExploreStore store;
    private final ExploreViews views;

    @Activate
    public ExploreCatalogResource(@Reference ExploreStore store, @Reference ExploreViews views) {
        this.store = store;
        this.views = views;
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.CatalogPage.class)
    public Map<String, Object> catalog(
            @Context UriInfo uri,
            @QueryParam("q") String q,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        String query = ExploreReposResource.text("q", q, ExploreReposResource.MAX_QUERY);
        PageRequest page = PageRequest.of(limit, null);
        Page p = store.list(new Filter(query, null, null, true), Sort.parse(null, query != null), cursor, page.limit());
        List<Map<String, Object>> items = new ArrayList<>();
        for (Map<String, Object> m : views.items(p.items(), uri.getBaseUri())) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("type", "repository");
            entry.putAll(m);
            items.add(entry);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("items", items);
        body.put("next_cursor", p.nextCursor());
        body.put("limit", page.limit());
        return body;
    }

    @GET
    @Path("suggest")
    @Anonymous
    @JsonShape(RepoJson.Suggestions.class)
    public Map<String, Object> catalogSuggest(@Context UriInfo uri, @QueryParam("q") String q) {
        return suggestions(uri, q, true);
    }

    Map<String, Object> suggestions(UriInfo uri, String q, boolean catalog) {
        String query = ExploreReposResource.text("q", q, 100);
        List<Map<String, Object>> out = new ArrayList<>();
        if (query != null) {
            for (ExploreStore.Suggestion found : store.suggest(query, MOST_SUGGESTIONS, catalog)) {
                views.ownerOfSpace(found.spaceId()).ifPresent(o -> {
                    Map<String, Object> s = new LinkedHashMap<>();
                    s.put("type", "repository");
                    s.put("id", found.id());
                    s.put("name", found.name());
                    s.put("full_name", o.path() + "/" + found.name());
                    s.put("description", found.description());
                    s.put("stars", found.stars());
                    out.add(s);
                });
            }
        }
        return Map.of("suggestions", out);
    }
}
