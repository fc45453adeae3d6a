package dev.atrium.store.ap.core.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.store.ap.api.LocalStores;
import dev.atrium.store.ap.api.LocalStores.LocalStore;
import dev.atrium.store.ap.api.RemoteDocuments;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;

/**
 * A workspace's published stores, {@code /api/spaces/:spaceId/stores}: create {@code {slug, name, summary?, icon_url?}},
 * list, update {@code {name?, summary?, icon_url?}} and delete by slug, and the explicit inventory at
 * {@code …/:storeSlug/inventory} (list; add {@code {repository_uri}}, whose actor is fetched through the egress guard
 * for its {@code cloneUri}, {@code defaultBranchRef} and {@code defaultBranchHash}; remove {@code ?repository_uri=}).
 * Every route proves the workspace through the kernel's {@link OwnerScope} first; a store of another workspace is 404.
 */
@Component(service = StoresResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/stores")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class StoresResource {

    static final Pattern SLUG = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?");
    private static final int MAX_STORES = 50;
    private static final int MAX_INVENTORY = 1000;

    private final OwnerScope ownerScope;
    private final StoreCatalog catalog;
    private final RemoteDocuments documents;
    private final PublicUrls urls;
    /** Tells the store model (Model A publishes Add and Remove) of explicit inventory changes, when one listens. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile EventAdmin events;

    @Activate
    public StoresResource(
            @Reference OwnerScope ownerScope,
            @Reference StoreCatalog catalog,
            @Reference RemoteDocuments documents,
            @Reference PublicUrls urls) {
        this.ownerScope = ownerScope;
        this.catalog = catalog;
        this.documents = documents;
        this.urls = urls;
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(StoreJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        String base = urls.base(uri.getBaseUri());
        return page.body(
                "stores",
                catalog.ofSpace(space.id(), page.limit(), page.offset()).stream()
                        .map(s -> json(s, base))
                        .toList(),
                catalog.countOfSpace(space.id()));
    }

    @POST
    @RequiresScope("repos:write")
    @JsonShape(StoreJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StoreJson.Create.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        only(body, Set.of("slug", "name", "summary", "icon_url"));
        String slug = b.text("slug", 1, 40);
        if (!SLUG.matcher(slug).matches()) {
            throw ApiException.badRequest("slug must be 1-40 lowercase letters, digits and inner hyphens");
        }
        String name = b.text("name", 1, 100);
        String summary = b.optionalText("summary", 0, 1000).orElse("");
        String icon =
                b.optionalText("icon_url", 1, 2048).map(StoresResource::iconUrl).orElse(null);
        if (catalog.countOfSpace(space.id()) >= MAX_STORES) {
            throw ApiException.conflict("a workspace may publish at most " + MAX_STORES + " stores");
        }
        try {
            return Response.status(201)
                    .entity(Map.of(
                            "store",
                            json(catalog.create(space.id(), slug, name, summary, icon), urls.base(uri.getBaseUri()))))
                    .build();
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("the store slug '" + slug + "' is taken on this server");
        }
    }

    @PATCH
    @Path("{storeSlug}")
    @RequiresScope("repos:write")
    @JsonShape(StoreJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @PathParam("storeSlug") String slug,
            @JsonShape(StoreJson.Change.class) JsonNode body) {
        NulText.reject(body);
        LocalStore store = owned(sc, spaceId, slug);
        JsonBody b = JsonBody.of(body);
        only(body, Set.of("name", "summary", "icon_url"));
        String name = b.optionalText("name", 1, 100).orElse(null);
        String summary = b.optionalText("summary", 0, 1000).orElse(null);
        boolean clearIcon = body.has("icon_url") && body.get("icon_url").isNull();
        String icon = clearIcon
                ? null
                : b.optionalText("icon_url", 1, 2048)
                        .map(StoresResource::iconUrl)
                        .orElse(null);
        return Map.of(
                "store",
                json(
                        catalog.update(store.id(), name, summary, icon, clearIcon)
                                .orElseThrow(StoresResource::notFound),
                        urls.base(uri.getBaseUri())));
    }

    @DELETE
    @Path("{storeSlug}")
    @RequiresScope("repos:write")
    @JsonShape(StoreJson.Success.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("storeSlug") String slug) {
        LocalStore store = owned(sc, spaceId, slug);
        if (!catalog.delete(store.id())) {
            throw notFound();
        }
        EventAdmin admin = events;
        if (admin != null) {
            admin.sendEvent(new Event(
                    LocalStores.STORE_DELETED,
                    Map.of(LocalStores.STORE_ID, store.id(), LocalStores.STORE_SLUG, store.slug())));
        }
        return Map.of("success", true);
    }

    @GET
    @Path("{storeSlug}/inventory")
    @RequiresScope("repos:read")
    @JsonShape(StoreJson.Inventory.class)
    public Map<String, Object> inventory(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("storeSlug") String slug) {
        LocalStore store = owned(sc, spaceId, slug);
        var items = catalog.items(store.id());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mode", items.isEmpty() ? "automatic" : "explicit");
        m.put("items", items.stream().map(StoreCatalog.Item::toJson).toList());
        return m;
    }

    @POST
    @Path("{storeSlug}/inventory")
    @RequiresScope("repos:write")
    @JsonShape(StoreJson.OneItem.class)
    public Response add(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("storeSlug") String slug,
            @JsonShape(StoreJson.Add.class) JsonNode body) {
        NulText.reject(body);
        LocalStore store = owned(sc, spaceId, slug);
        JsonBody b = JsonBody.of(body);
        only(body, Set.of("repository_uri"));
        String repositoryUri = b.text("repository_uri", 1, 2048);
        URI target;
        try {
            target = new URI(repositoryUri);
        } catch (URISyntaxException e) {
            throw ApiException.badRequest("repository_uri is not a URL");
        }
        if (!target.isAbsolute() || target.getHost() == null) {
            throw ApiException.badRequest("repository_uri must be an absolute http(s) URL of a Repository actor");
        }
        if (catalog.items(store.id()).size() >= MAX_INVENTORY) {
            throw ApiException.conflict("a store's inventory holds at most " + MAX_INVENTORY + " repositories");
        }
        JsonNode actor;
        try {
            actor = documents.fetch(target, null);
        } catch (RemoteDocuments.RemoteException e) {
            throw new ApiException(
                    e.status(),
                    e.status() == 400 ? "BAD_REQUEST" : e.status() == 504 ? "GATEWAY_TIMEOUT" : "BAD_GATEWAY",
                    "the repository actor could not be read: " + e.getMessage());
        }
        if (!hasType(actor.path("type"), "Repository")) {
            throw new ApiException(502, "BAD_GATEWAY", repositoryUri + " is not a Repository actor");
        }
        JsonNode clone = actor.path("cloneUri");
        String cloneUri = clone.isArray() && clone.size() > 0
                ? clone.get(0).asText(null)
                : clone.isTextual() ? clone.asText() : null;
        if (cloneUri == null) {
            throw new ApiException(502, "BAD_GATEWAY", repositoryUri + " names no cloneUri");
        }
        try {
            StoreCatalog.Item item = catalog.add(
                    store.id(),
                    repositoryUri,
                    clip(cloneUri),
                    clip(actor.path("defaultBranchRef").asText(null)),
                    clip(actor.path("defaultBranchHash").asText(null)));
            inventoryChanged(LocalStores.INVENTORY_ADDED, store, repositoryUri);
            return Response.status(201).entity(Map.of("item", item.toJson())).build();
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("the repository is in the store's inventory already");
        }
    }

    @DELETE
    @Path("{storeSlug}/inventory")
    @RequiresScope("repos:write")
    @JsonShape(StoreJson.Success.class)
    public Map<String, Object> remove(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("storeSlug") String slug,
            @QueryParam("repository_uri") String repositoryUri) {
        LocalStore store = owned(sc, spaceId, slug);
        if (repositoryUri == null || repositoryUri.isBlank()) {
            throw ApiException.badRequest("repository_uri is required");
        }
        if (!catalog.remove(store.id(), repositoryUri)) {
            throw ApiException.notFound("the repository is not in the store's inventory");
        }
        inventoryChanged(LocalStores.INVENTORY_REMOVED, store, repositoryUri);
        return Map.of("success", true);
    }

    /** Sent, not posted: the model has recorded the change (Add or Remove in the store's outbox) when the request answers. */
    private void inventoryChanged(String topic, LocalStore store, String repositoryUri) {
        EventAdmin admin = events;
        if (admin != null) {
            admin.sendEvent(new Event(
                    topic,
                    Map.of(
                            LocalStores.STORE_ID,
                            store.id(),
                            LocalStores.STORE_SLUG,
                            store.slug(),
                            LocalStores.REPOSITORY_URI,
                            repositoryUri)));
        }
    }

    private LocalStore owned(SecurityContext sc, String spaceId, String slug) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return catalog.bySlug(slug).filter(s -> s.spaceId().equals(space.id())).orElseThrow(StoresResource::notFound);
    }

    static ApiException notFound() {
        return ApiException.notFound("store not found");
    }

    private static void only(JsonNode body, Set<String> allowed) {
        for (var it = body.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!allowed.contains(field)) {
                throw ApiException.badRequest(
                        "unknown field '" + field + "'; known: " + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        }
    }

    private static String iconUrl(String url) {
        try {
            URI u = new URI(url);
            if (!("https".equals(u.getScheme()) || "http".equals(u.getScheme())) || u.getHost() == null) {
                throw ApiException.badRequest("icon_url must be an http(s) URL");
            }
            return url;
        } catch (URISyntaxException e) {
            throw ApiException.badRequest("icon_url is not a URL");
        }
    }

    private static boolean hasType(JsonNode type, String wanted) {
        if (type.isArray()) {
            for (JsonNode t : type) {
                if (wanted.equals(t.asText())) {
                    return true;
                }
            }
            return false;
        }
        return wanted.equals(type.asText());
    }

    private static String clip(String s) {
        return s == null || s.length() <= 2048 ? s : s.substring(0, 2048);
    }

    static Map<String, Object> json(LocalStore s, String base) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("space_id", s.spaceId());
        m.put("slug", s.slug());
        m.put("name", s.name());
        m.put("summary", s.summary());
        m.put("icon_url", s.iconUrl());
        m.put("actor_url", base + "/ap/stores/" + s.slug());
        m.put("created_at", s.createdAt().toString());
        m.put("updated_at", s.updatedAt().toString());
        return m;
    }
}
