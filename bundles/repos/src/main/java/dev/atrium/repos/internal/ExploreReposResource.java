package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.repos.internal.ExploreStore.Filter;
import dev.atrium.repos.internal.ExploreStore.Listed;
import dev.atrium.repos.internal.ExploreStore.Page;
import dev.atrium.repos.internal.ExploreStore.Sort;
import dev.atrium.repos.internal.RepositoryOwners.Owner;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * {@code /api/explore/repos}: public repositories for anyone, signed in or not, with the same answer for both.
 * Private repositories are not in any statement's result (docs/decisions/explore.md).
 */
@Component(service = ExploreReposResource.class)
@KernelResource
@Path("/api/explore/repos")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ExploreReposResource {

    static final int MAX_QUERY = 200;

    private final ExploreStore store;
    private final ExploreViews views;

    @Activate
    public ExploreReposResource(@Reference ExploreStore store, @Reference ExploreViews views) {
        this.store = store;
        this.views = views;
    }

    @GET
    @Anonymous
    @JsonShape(RepoJson.ExplorePage.class)
    public Map<String, Object> list(
            @Context UriInfo uri,
            @QueryParam("q") String q,
            @QueryParam("language") String language,
            @QueryParam("owner") String owner,
            @QueryParam("sort") String sort,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        String query = text("q", q, MAX_QUERY);
        String lang = text("language", language, 50);
        String ownerName = text("owner", owner, 100);
        PageRequest page = PageRequest.of(limit, null);
        Sort s = Sort.parse(sort, query != null);
        List<String> spaces = null;
        if (ownerName != null) {
            Optional<Owner> o = views.ownerFilter(ownerName);
            if (o.isEmpty()) {
                return pageBody(new Page(List.of(), null), page.limit(), uri);
            }
            spaces = List.of(o.get().space().id());
        }
        return pageBody(store.list(new Filter(query, lang, spaces, false), s, cursor, page.limit()), page.limit(), uri);
    }

    @GET
    @Path("trending")
    @Anonymous
    @JsonShape(RepoJson.TrendingPage.class)
    public Map<String, Object> trending(
            @Context UriInfo uri, @QueryParam("limit") String limit, @QueryParam("offset") String offset) {
        PageRequest page = PageRequest.of(limit, offset);
        List<Listed> rows = store.trending(page.limit(), page.offset());
        List<Map<String, Object>> items = new java.util.ArrayList<>();
        for (Listed l : rows) {
            views.item(l, uri.getBaseUri()).ifPresent(m -> {
                m.put("trending_score", l.rank());
                items.add(m);
            });
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("repositories", items);
        body.put("window_days", ExploreStore.TRENDING_WINDOW_DAYS);
        body.put("limit", page.limit());
        body.put("offset", page.offset());
        return body;
    }

    @GET
    @Path("new")
    @Anonymous
    @JsonShape(RepoJson.ExplorePage.class)
    public Map<String, Object> newest(
            @Context UriInfo uri, @QueryParam("cursor") String cursor, @QueryParam("limit") String limit) {
        PageRequest page = PageRequest.of(limit, null);
        return pageBody(
                store.list(new Filter(null, null, null, false), Sort.CREATED, cursor, page.limit()), page.limit(), uri);
    }

    @GET
    @Path("recent")
    @Anonymous
    @JsonShape(RepoJson.ExplorePage.class)
    public Map<String, Object> recent(
            @Context UriInfo uri, @QueryParam("cursor") String cursor, @QueryParam("limit") String limit) {
        PageRequest page = PageRequest.of(limit, null);
        return pageBody(
                store.list(new Filter(null, null, null, false), Sort.PUSHED, cursor, page.limit()), page.limit(), uri);
    }

    @GET
    @Path("by-name/{username}/{repoName}")
    @Anonymous
    @JsonShape(RepoJson.ExploreOne.class)
    public Map<String, Object> byName(
            @Context UriInfo uri, @PathParam("username") String username, @PathParam("repoName") String repoName) {
        NulText.reject("username", username);
        NulText.reject("repoName", repoName);
        Owner o = views.owner(username);
        Listed l = store.publicByName(o.space().id(), stripGit(repoName))
                .orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND));
        return Map.of("repository", views.item(l, o, uri.getBaseUri()));
    }

    @GET
    @Path("{repoId}")
    @Anonymous
    @JsonShape(RepoJson.ExploreOne.class)
    public Map<String, Object> byId(@Context UriInfo uri, @PathParam("repoId") String repoId) {
        NulText.reject("repoId", repoId);
        Listed l = store.publicById(repoId).orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND));
        return Map.of(
                "repository",
                views.item(l, uri.getBaseUri()).orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND)));
    }

    static String stripGit(String name) {
        return name.endsWith(".git") ? name.substring(0, name.length() - 4) : name;
    }

    /** A query parameter's trimmed text, null when absent or blank; 400 when too long or holding NUL. */
    static String text(String name, String value, int max) {
        if (value == null || value.isBlank()) {
            return null;
        }
        NulText.reject(name, value);
        String t = value.trim();
        if (t.length() > max) {
            throw ApiException.badRequest(name + " must be at most " + max + " characters");
        }
        return t;
    }

    private Map<String, Object> pageBody(Page p, int limit, UriInfo uri) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("repositories", views.items(p.items(), uri.getBaseUri()));
        body.put("next_cursor", p.nextCursor());
        body.put("limit", limit);
        return body;
    }
}
