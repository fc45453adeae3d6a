package dev.atrium.store.registry.internal;

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
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.store.registry.internal.RegistryStore.Entry;
import dev.atrium.store.registry.internal.RemoteStores.RemoteRepository;
import dev.atrium.store.registry.internal.RemoteStores.StoreActor;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

/**
 * {@code /api/spaces/:spaceId/store-registry}: the remote stores a workspace reads. Every route proves ownership through
 * the kernel's {@link OwnerScope} first; an entry of another workspace answers 404 as a missing one.
 */
@Component(service = StoreRegistryResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/store-registry")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class StoreRegistryResource {

    private static final Pattern REPO_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

    private final OwnerScope ownerScope;
    private final RegistryStore store;
    private final RemoteStores remotes;
    private final RepositoryRegistry repositories;
    private final PublicUrls urls;

    @Activate
    public StoreRegistryResource(
            @Reference OwnerScope ownerScope,
            @Reference RegistryStore store,
            @Reference RemoteStores remotes,
            @Reference RepositoryRegistry repositories,
            @Reference PublicUrls urls) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.remotes = remotes;
        this.repositories = repositories;
        this.urls = urls;
    }

    @GET
    @RequiresScope("repos:read")
    @JsonShape(RegistryJson.Entries.class)
    public Map<String, Object> list(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return Map.of(
                "stores", store.list(space.id()).stream().map(Entry::toJson).toList());
    }

    @POST
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.One.class)
    public Response register(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(RegistryJson.Register.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String identifier = b.text("identifier", 3, 2048).trim();
        boolean active = b.bool("set_active").orElse(false);
        boolean subscribe = b.bool("subscribe").orElse(false);
        StoreActor actor = remotes.actor(remotes.actorUrl(identifier));
        Entry e = store.register(space.id(), actor, active, subscribe);
        return Response.status(201).entity(Map.of("store", e.toJson())).build();
    }

    @PATCH
    @Path("{entryId}")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("entryId") String entryId,
            @JsonShape(RegistryJson.Flags.class) JsonNode body) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        Boolean active = b.bool("is_active").orElse(null);
        Boolean subscribe = b.bool("subscription_enabled").orElse(null);
        if (active == null && subscribe == null) {
            throw ApiException.badRequest("nothing to change: give is_active or subscription_enabled");
        }
        return Map.of(
                "store",
                store.setFlags(store.require(space.id(), entryId), active, subscribe)
                        .toJson());
    }

    @DELETE
    @Path("{entryId}")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.Success.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("entryId") String entryId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (!store.delete(store.require(space.id(), entryId))) {
            throw ApiException.notFound("no store registry entry " + entryId);
        }
        return Map.of("success", true);
    }

    @POST
    @Path("{entryId}/refresh")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.One.class)
    public Map<String, Object> refresh(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("entryId") String entryId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        Entry e = store.require(space.id(), entryId);
        return Map.of(
                "store",
                store.refreshed(e, remotes.actor(URI.create(e.actorUrl()))).toJson());
    }

    @GET
    @Path("{entryId}/repositories")
    @RequiresScope("repos:read")
    @JsonShape(RegistryJson.Repositories.class)
    public Map<String, Object> repositories(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("entryId") String entryId,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        StoreActor actor =
                remotes.actor(URI.create(store.require(space.id(), entryId).actorUrl()));
        return remotes.repositories(actor, page(page), limit(limit)).toJson();
    }

    @GET
    @Path("{entryId}/repositories/search")
    @RequiresScope("repos:read")
    @JsonShape(RegistryJson.Found.class)
    public Map<String, Object> search(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("entryId") String entryId,
            @QueryParam("q") String q,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 200) {
            throw ApiException.badRequest("q must be at most 200 characters");
        }
        NulText.reject("q", q);
        int p = page(page);
        int l = limit(limit);
        StoreActor actor =
                remotes.actor(URI.create(store.require(space.id(), entryId).actorUrl()));
        Map<String, Object> m =
                new LinkedHashMap<>(remotes.search(actor, q, p, l).toJson());
        m.put("query", q);
        return m;
    }

    @POST
    @Path("{entryId}/install")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.OneInstalled.class)
    public Response install(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @PathParam("entryId") String entryId,
            @JsonShape(RegistryJson.Install.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String owner = b.text("remote_owner", 1, 200);
        String name = b.text("remote_repo_name", 1, 100);
        String local = b.optionalText("local_name", 1, 100).orElse(name);
        if (!REPO_NAME.matcher(local).matches()) {
            throw ApiException.badRequest(
                    "local_name must be 1-100 of letters, digits, '.', '_' and '-', starting with a letter or digit");
        }
        Entry e = store.require(space.id(), entryId);
        StoreActor actor = remotes.actor(URI.create(e.actorUrl()));
        return installed(space, uri, actor, remotes.repository(actor, owner, name), local);
    }

    /**
     * Installs a repository the store lists, named by its URL (its repository object or canonical actor) rather than by
     * owner and name: body {@code {repository_url, local_name?}}.
     */
    @POST
    @Path("{entryId}/import-repository")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.OneInstalled.class)
    public Response importRepository(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @PathParam("entryId") String entryId,
            @JsonShape(RegistryJson.Import.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String url = b.text("repository_url", 8, 2048);
        Entry e = store.require(space.id(), entryId);
        StoreActor actor = remotes.actor(URI.create(e.actorUrl()));
        URI target;
        try {
            target = new URI(url);
        } catch (java.net.URISyntaxException ex) {
            throw ApiException.badRequest("repository_url is not a valid URL");
        }
        URI storeUri = URI.create(actor.actorUrl());
        if (target.getHost() == null
                || !target.getHost().equalsIgnoreCase(storeUri.getHost())
                || target.getPort() != storeUri.getPort()) {
            throw ApiException.badRequest("repository_url must be a repository of this store (" + actor.domain() + ")");
        }
        String[] parts = ownerAndName(target.getPath());
        String local = b.optionalText("local_name", 1, 100).orElse(parts[1]);
        if (!REPO_NAME.matcher(local).matches()) {
            throw ApiException.badRequest(
                    "local_name must be 1-100 of letters, digits, '.', '_' and '-', starting with a letter or digit");
        }
        return installed(space, uri, actor, remotes.repository(actor, parts[0], parts[1]), local);
    }

    /** {@code …/repositories/:owner/:repo} (Model B) or {@code /ap/repos/:owner/:repo} (Model A): the last two segments. */
    private static String[] ownerAndName(String path) {
        String p = path == null ? "" : path;
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        String[] segs = p.split("/");
        if (segs.length < 3 || !(p.contains("/repositories/") || p.contains("/ap/repos/"))) {
            throw ApiException.badRequest(
                    "repository_url must name a repository: …/repositories/<owner>/<repo> or …/ap/repos/<owner>/<repo>");
        }
        return new String[] {
            java.net.URLDecoder.decode(segs[segs.length - 2], java.nio.charset.StandardCharsets.UTF_8),
            java.net.URLDecoder.decode(segs[segs.length - 1], java.nio.charset.StandardCharsets.UTF_8)
        };
    }

    private Response installed(
            SpaceRef space, UriInfo uri, StoreActor actor, RemoteRepository remote, String localName) {
        if (remote.cloneUrl() == null) {
            throw new ApiException(502, "BAD_GATEWAY", "the store lists " + remote.id() + " without a clone URL");
        }
        URI clone;
        try {
            clone = new URI(remote.cloneUrl());
        } catch (java.net.URISyntaxException ex) {
            throw new ApiException(502, "BAD_GATEWAY", "the store's clone URL for " + remote.id() + " is not valid");
        }
        if (repositories.find(space.id(), localName).isPresent()) {
            throw ApiException.conflict("this workspace has a repository named " + localName + " already");
        }
        String summary = remote.summary() == null ? "" : remote.summary();
        var imported = repositories.importRemote(
                space.id(),
                localName,
                summary.length() > 1000 ? summary.substring(0, 1000) : summary,
                "private",
                clone,
                null);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("id", imported.repository().id());
        r.put("name", imported.repository().name());
        r.put(
                "clone_url",
                urls.base(uri.getBaseUri()) + "/git/" + space.slug() + "/"
                        + imported.repository().name() + ".git");
        r.put("remote_store_actor_url", actor.actorUrl());
        r.put("remote_browse_url", remote.browseUrl());
        return Response.status(201).entity(Map.of("repository", r)).build();
    }

    @POST
    @Path("{entryId}/poll")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.Polled.class)
    public Map<String, Object> poll(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("entryId") String entryId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return Map.of("new_updates", RegistryPoller.poll(store, remotes, store.require(space.id(), entryId)));
    }

    @GET
    @Path("updates")
    @RequiresScope("repos:read")
    @JsonShape(RegistryJson.Updates.class)
    public Map<String, Object> updates(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("unseen") String unseen,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        boolean only = switch (unseen == null ? "false" : unseen) {
            case "true", "1" -> true;
            case "false", "0" -> false;
            default -> throw ApiException.badRequest("unseen must be true or false");
        };
        PageRequest page = PageRequest.of(limit, offset);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("total", store.countUpdates(space.id(), only));
        m.put(
                "updates",
                store.updates(space.id(), only, page.limit(), page.offset()).stream()
                        .map(RegistryStore.Update::toJson)
                        .toList());
        return m;
    }

    @POST
    @Path("updates/mark-seen")
    @RequiresScope("repos:write")
    @JsonShape(RegistryJson.Success.class)
    public Map<String, Object> markSeen(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(RegistryJson.MarkSeen.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        boolean all = b.bool("all").orElse(false);
        JsonNode ids = body.get("update_ids");
        if (all == (ids != null && !ids.isNull())) {
            throw ApiException.badRequest("give either update_ids (an array of ids) or all: true");
        }
        if (all) {
            store.markSeen(space.id(), null);
        } else {
            if (!ids.isArray() || ids.size() > 1000) {
                throw ApiException.badRequest("update_ids must be an array of at most 1000 ids");
            }
            List<String> list = new ArrayList<>();
            for (JsonNode id : ids) {
                if (!id.isTextual() || id.asText().isEmpty() || id.asText().length() > 100) {
                    throw ApiException.badRequest("update_ids must hold ids (strings of 1-100 characters)");
                }
                list.add(id.asText());
            }
            store.markSeen(space.id(), list);
        }
        return Map.of("success", true);
    }

    private static int page(String page) {
        if (page == null || page.isEmpty()) {
            return 1;
        }
        try {
            int p = Integer.parseInt(page);
            if (p < 1 || p > 100_000) {
                throw ApiException.badRequest("page must be a whole number from 1 to 100000");
            }
            return p;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("page must be a whole number from 1 to 100000");
        }
    }

    private static int limit(String limit) {
        return PageRequest.of(limit, null).limit();
    }
}
