package dev.atrium.store.pullonly.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.store.ap.api.ActivityMedia;
import dev.atrium.store.ap.api.ActorKeys;
import dev.atrium.store.ap.api.CollectionPaging;
import dev.atrium.store.ap.api.LocalStores;
import dev.atrium.store.ap.api.LocalStores.LocalStore;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Federation Model B: each store a workspace publishes is a pull-only catalog of that workspace's public repositories,
 * readable by anyone ({@code /ap/stores/<slug>…}, every row of the spec's Model B table). Nothing here accepts
 * activities: the inbox answers 501 and followers are always empty. Private repositories never appear, and a
 * repository disappears when it is deleted or made private (no {@code Delete} activity).
 */
@Component(service = PullOnlyStore.class)
@KernelResource
@Path("/ap/stores/{slug}")
@Anonymous
public class PullOnlyStore {

    static final String PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
    private static final ObjectMapper JSON = JsonMappers.create();

    private final LocalStores stores;
    private final RepositoryRegistry repositories;
    private final SpaceDirectory spaces;
    private final ActorKeys keys;
    private final PublicUrls urls;

    @Activate
    public PullOnlyStore(
            @Reference LocalStores stores,
            @Reference RepositoryRegistry repositories,
            @Reference SpaceDirectory spaces,
            @Reference ActorKeys keys,
            @Reference PublicUrls urls) {
        this.stores = stores;
        this.repositories = repositories;
        this.spaces = spaces;
        this.keys = keys;
        this.urls = urls;
    }

    /** A store as published: its row, its workspace and the URLs built on the public base. */
    record Published(LocalStore store, SpaceRef space, String base) {
        String actor() {
            return base + "/ap/stores/" + store.slug();
        }

        String repository(Repository r) {
            return actor() + "/repositories/" + space.slug() + "/" + r.name();
        }
    }

    private Published published(String slug, UriInfo uri) {
        LocalStore store = stores.bySlug(slug).orElseThrow(() -> ApiException.notFound("store not found"));
        // a store whose workspace is gone or whose owner is suspended is not published
        SpaceRef space = spaces.byId(store.spaceId()).orElseThrow(() -> ApiException.notFound("store not found"));
        return new Published(store, space, urls.base(uri.getBaseUri()));
    }

    @GET
    @JsonShape(PullJson.StoreActor.class)
    public Response actor(@PathParam("slug") String slug, @Context UriInfo uri) {
        Published p = published(slug, uri);
        String actor = p.actor();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(p.base()));
        m.put("id", actor);
        m.put("type", "Group");
        m.put("preferredUsername", p.store().slug());
        m.put("name", p.store().name());
        m.put("summary", p.store().summary());
        m.put("url", actor);
        if (p.store().iconUrl() != null) {
            m.put("icon", Map.of("type", "Image", "url", p.store().iconUrl()));
        }
        m.put("inbox", actor + "/inbox");
        m.put("outbox", actor + "/outbox");
        m.put("followers", actor + "/followers");
        ActorKeys.ActorKey key = keys.keyOf(actor);
        m.put("publicKey", Map.of("id", key.keyId(), "owner", actor, "publicKeyPem", key.publicKeyPem()));
        m.put("ext:repositories", actor + "/repositories");
        m.put("ext:search", actor + "/search");
        m.put("ext:repositorySearch", actor + "/search/repositories");
        m.put("ext:distributionMode", "pull-only");
        return activity(m);
    }

    @GET
    @Path("repositories")
    @JsonShape(PullJson.Repositories.class)
    public Response repositories(
            @PathParam("slug") String slug,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @QueryParam("expand") String expand,
            @Context UriInfo uri) {
        Published p = published(slug, uri);
        return activity(collection(p, p.actor() + "/repositories", null, publicRepositories(p), page, limit, expand));
    }

    @GET
    @Path("repositories/{owner}/{repo}")
    @JsonShape(PullJson.Repository.class)
    public Response repository(
            @PathParam("slug") String slug,
            @PathParam("owner") String owner,
            @PathParam("repo") String name,
            @Context UriInfo uri) {
        Published p = published(slug, uri);
        if (!owner.equals(p.space().slug())) {
            throw ApiException.notFound("repository not found");
        }
        Repository r = repositories
                .find(p.space().id(), name)
                .filter(Repository::isPublic)
                .orElseThrow(() -> ApiException.notFound("repository not found"));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(p.base()));
        m.putAll(repositoryObject(p, r));
        return activity(m);
    }

    @GET
    @Path("outbox")
    @JsonShape(PullJson.Outbox.class)
    public Response outbox(
            @PathParam("slug") String slug,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @Context UriInfo uri) {
        Published p = published(slug, uri);
        List<Repository> newestFirst = new ArrayList<>(publicRepositories(p));
        newestFirst.sort(Comparator.comparing(Repository::updatedAt)
                .thenComparing(Repository::id)
                .reversed());
        int[] bounds = pageBounds(page, limit);
        String id = p.actor() + "/outbox";
        if (bounds == null) {
            return activity(summary(p, id, newestFirst.size(), limit, null));
        }
        List<Object> items = new ArrayList<>();
        for (Repository r : slice(newestFirst, bounds)) {
            boolean created = r.updatedAt().equals(r.createdAt());
            Map<String, Object> a = new LinkedHashMap<>();
            a.put(
                    "id",
                    p.repository(r) + "#" + (created ? "create" : "update") + "-"
                            + r.updatedAt().toEpochMilli());
            a.put("type", created ? "Create" : "Update");
            a.put("actor", p.actor());
            a.put("published", r.updatedAt().toString());
            a.put("to", List.of(PUBLIC));
            a.put("object", repositoryObject(p, r));
            items.add(a);
        }
        return activity(page(p, id, newestFirst.size(), bounds, items, null));
    }

    @GET
    @Path("search")
    @JsonShape(PullJson.SearchService.class)
    public Response searchService(@PathParam("slug") String slug, @Context UriInfo uri) {
        Published p = published(slug, uri);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(p.base()));
        m.put("id", p.actor() + "/search");
        m.put("type", List.of("Service", "ext:SearchService"));
        m.put("attributedTo", p.actor());
        m.put("name", p.store().name() + " search");
        m.put("summary", "Finds the store's repositories by a part of their name or description");
        m.put("ext:repositorySearch", p.actor() + "/search/repositories");
        return activity(m);
    }

    @GET
    @Path("search/repositories")
    @JsonShape(PullJson.Repositories.class)
    public Response searchRepositories(
            @PathParam("slug") String slug,
            @QueryParam("q") String q,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @QueryParam("expand") String expand,
            @Context UriInfo uri) {
        Published p = published(slug, uri);
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 200) {
            throw ApiException.badRequest("q must be at most 200 characters");
        }
        String needle = q.trim().toLowerCase(Locale.ROOT);
        List<Repository> found = publicRepositories(p).stream()
                .filter(r -> r.name().toLowerCase(Locale.ROOT).contains(needle)
                        || (r.description() != null
                                && r.description().toLowerCase(Locale.ROOT).contains(needle)))
                .toList();
        return activity(collection(
                p,
                p.actor() + "/search/repositories",
                "q=" + URLEncoder.encode(q, StandardCharsets.UTF_8),
                found,
                page,
                limit,
                expand));
    }

    @POST
    @Path("inbox")
    public Response inbox(@PathParam("slug") String slug, @Context UriInfo uri) {
        published(slug, uri);
        throw new ApiException(
                501, "NOT_IMPLEMENTED", "this store is a pull-only catalog (Model B): it accepts no activities");
    }

    @GET
    @Path("followers")
    @JsonShape(PullJson.Followers.class)
    public Response followers(@PathParam("slug") String slug, @Context UriInfo uri) {
        Published p = published(slug, uri);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", ActivityMedia.ACTIVITYSTREAMS_CONTEXT);
        m.put("id", p.actor() + "/followers");
        m.put("type", "OrderedCollection");
        m.put("totalItems", 0);
        m.put("orderedItems", List.of());
        return activity(m);
    }

    private List<Repository> publicRepositories(Published p) {
        return repositories.list(p.space().id()).stream()
                .filter(Repository::isPublic)
                .toList();
    }

    private Map<String, Object> collection(
            Published p, String id, String query, List<Repository> all, String page, String limit, String expand) {
        boolean full = expand != null && !expand.isBlank();
        if (full && !"object".equals(expand)) {
            throw ApiException.badRequest("expand must be 'object'");
        }
        int[] bounds = pageBounds(page, limit);
        String extra = (query == null ? "" : "&" + query) + (full ? "&expand=object" : "");
        if (bounds == null) {
            return summary(p, id, all.size(), limit, extra);
        }
        List<Object> items = new ArrayList<>();
        for (Repository r : slice(all, bounds)) {
            items.add(full ? repositoryObject(p, r) : p.repository(r));
        }
        return page(p, id, all.size(), bounds, items, extra);
    }

    private static Map<String, Object> summary(Published p, String id, int total, String limit, String extra) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(p.base()));
        m.put("id", id + (extra == null || extra.isEmpty() ? "" : "?" + extra.substring(1)));
        m.put("type", "OrderedCollection");
        m.put("totalItems", total);
        m.put(
                "first",
                id + "?page=1" + (limit == null ? "" : "&limit=" + parseLimit(limit)) + (extra == null ? "" : extra));
        return m;
    }

    private static Map<String, Object> page(
            Published p, String id, int total, int[] bounds, List<Object> items, String extra) {
        int number = bounds[0];
        int size = bounds[1];
        String suffix = "&limit=" + size + (extra == null ? "" : extra);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(p.base()));
        m.put("id", id + "?page=" + number + suffix);
        m.put("type", "OrderedCollectionPage");
        m.put("partOf", id);
        m.put("totalItems", total);
        if (number > 1) {
            m.put("prev", id + "?page=" + (number - 1) + suffix);
        }
        if ((long) number * size < total) {
            m.put("next", id + "?page=" + (number + 1) + suffix);
        }
        m.put("orderedItems", items);
        return m;
    }

    /** {page, limit}, or null when no page was asked for (the summary collection). */
    static int[] pageBounds(String page, String limit) {
        CollectionPaging paging = paging(page, limit);
        return paging.page() == null ? null : new int[] {paging.page(), paging.limit()};
    }

    static int parseLimit(String limit) {
        return paging(null, limit).limit();
    }

    /** The paging rules both store models share, a client's mistake answered 400. */
    private static CollectionPaging paging(String page, String limit) {
        try {
            return CollectionPaging.of(page, limit);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
    }

    private static <T> List<T> slice(List<T> all, int[] bounds) {
        long from = (long) (bounds[0] - 1) * bounds[1];
        if (from >= all.size()) {
            return List.of();
        }
        return all.subList((int) from, (int) Math.min(all.size(), from + bounds[1]));
    }

    private Map<String, Object> repositoryObject(Published p, Repository r) {
        String api = p.base() + "/api/repos/" + r.id();
        String browse = p.base() + "/@" + p.space().slug() + "/" + r.name();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", p.repository(r));
        m.put("type", List.of("Document", "ext:GitRepository"));
        m.put("name", r.name());
        m.put("summary", r.description() == null ? "" : r.description());
        m.put("url", browse);
        m.put("published", r.createdAt().toString());
        m.put("updated", r.updatedAt().toString());
        m.put("attributedTo", p.actor());
        m.put("ext:owner", p.space().slug());
        m.put("ext:visibility", r.visibility());
        m.put("ext:defaultBranch", r.defaultBranch());
        m.put("ext:cloneUrl", p.base() + "/git/" + p.space().slug() + "/" + r.name() + ".git");
        m.put("ext:browseUrl", browse);
        m.put("ext:branchesEndpoint", api + "/branches");
        m.put("ext:commitsEndpoint", api + "/commits");
        m.put("ext:treeUrlTemplate", api + "/tree/{ref}/{+path}");
        m.put("ext:blobUrlTemplate", api + "/blob/{ref}/{+path}");
        m.put("ext:refsEndpoint", api + "/branches");
        return m;
    }

    static List<Object> context(String base) {
        return List.of(
                ActivityMedia.ACTIVITYSTREAMS_CONTEXT,
                ActivityMedia.SECURITY_CONTEXT,
                Map.of("ext", base + "/ns/ext-git#"));
    }

    static Response activity(Map<String, Object> body) {
        return json(body, ActivityMedia.ACTIVITY_JSON);
    }

    static Response json(Object body, String type) {
        try {
            return Response.ok(JSON.writeValueAsString(body)).type(type).build();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static Optional<String> hostOf(String base) {
        URI u = URI.create(base);
        return Optional.ofNullable(u.getHost()).map(h -> u.getPort() == -1 ? h : h + ":" + u.getPort());
    }
}
