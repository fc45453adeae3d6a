package dev.atrium.store.inventory.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.SelfAuthenticated;
import dev.atrium.store.ap.api.ActorKeys;
import dev.atrium.store.inventory.internal.Directory.RepoView;
import java.io.InputStream;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Store actors, {@code /ap/stores/:store} (type {@code [Service, Store]}), their inventory (hybrid: the explicit one
 * when it has entries, else every public repository of the workspace), outbox, followers, search service and repository
 * search, the inbox (Follow/Undo, signed), and the redirects from Model B's paths ({@code …/repositories} to the
 * inventory, {@code …/repositories/:owner/:repo} to the canonical repository actor).
 */
@Component(service = StoreActors.class)
@KernelResource
@Path("/ap/stores/{store}")
@Anonymous
public class StoreActors {

    private final Model model;
    private final Outboxes outboxes;
    private final Inbox inbox;
    private final ActorKeys keys;

    @Activate
    public StoreActors(
            @Reference Model model, @Reference Outboxes outboxes, @Reference Inbox inbox, @Reference ActorKeys keys) {
        this.model = model;
        this.outboxes = outboxes;
        this.inbox = inbox;
        this.keys = keys;
    }

    @GET
    @JsonShape(ActivityJson.StoreActor.class)
    public Response actor(@PathParam("store") String slug, @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        String base = model.base(uri);
        String actor = base + p.path();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", Docs.context(base));
        m.put("id", actor);
        m.put("type", List.of("Service", "Store"));
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
        m.put("inventory", actor + "/inventory");
        m.put("search", actor + "/search");
        m.put("repositorySearch", actor + "/search/repositories");
        ActorKeys.ActorKey key = keys.keyOf(actor);
        m.put("publicKey", Map.of("id", key.keyId(), "owner", actor, "publicKeyPem", key.publicKeyPem()));
        return Docs.activity(m);
    }

    @GET
    @Path("inventory")
    @JsonShape(ActivityJson.Collection.class)
    public Response inventory(@PathParam("store") String slug, @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        String base = model.base(uri);
        return Docs.activity(Docs.collection(base, base + p.path() + "/inventory", model.inventory(p, base)));
    }

    @GET
    @Path("repositories")
    @NotJson
    public Response repositories(@PathParam("store") String slug, @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        return Docs.redirect(model.base(uri) + p.path() + "/inventory");
    }

    @GET
    @Path("repositories/{owner}/{repo}")
    @NotJson
    public Response repository(
            @PathParam("store") String slug,
            @PathParam("owner") String owner,
            @PathParam("repo") String name,
            @Context UriInfo uri) {
        model.store(slug);
        RepoView r = model.publicRepository(owner, name);
        return Docs.redirect(model.base(uri) + r.actorPath());
    }

    @GET
    @Path("outbox")
    @JsonShape(ActivityJson.Outbox.class)
    public Response outbox(
            @PathParam("store") String slug,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        String base = model.base(uri);
        String path = p.path();
        return Docs.activity(Docs.paged(
                base,
                base + path + "/outbox",
                outboxes.count(path),
                page,
                limit,
                (size, offset) -> outboxes.outbox(path, size, offset).stream()
                        .map(s -> Outboxes.render(s.template(), base))
                        .toList()));
    }

    @GET
    @Path("followers")
    @JsonShape(ActivityJson.Followers.class)
    public Response followers(
            @PathParam("store") String slug,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        String base = model.base(uri);
        String path = p.path();
        return Docs.activity(Docs.paged(
                base,
                base + path + "/followers",
                outboxes.followerCount(path),
                page,
                limit,
                (size, offset) -> outboxes.followers(path, size, offset).stream()
                        .map(Outboxes.Follower::follower)
                        .toList()));
    }

    @GET
    @Path("search")
    @JsonShape(ActivityJson.SearchService.class)
    public Response search(@PathParam("store") String slug, @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        String base = model.base(uri);
        String actor = base + p.path();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", Docs.context(base));
        m.put("id", actor + "/search");
        m.put("type", List.of("Service", "ext:SearchService"));
        m.put("attributedTo", actor);
        m.put("name", p.store().name() + " search");
        m.put("summary", "Finds the store's repositories by a part of their name or description");
        m.put("repositorySearch", actor + "/search/repositories");
        return Docs.activity(m);
    }

    /**
     * The inventory's repositories whose name or description holds {@code q} (case-insensitive); a remote repository of
     * an explicit inventory is matched by the last segment of its actor URI.
     */
    @GET
    @Path("search/repositories")
    @JsonShape(ActivityJson.Collection.class)
    public Response searchRepositories(
            @PathParam("store") String slug, @QueryParam("q") String q, @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 200) {
            throw ApiException.badRequest("q must be at most 200 characters");
        }
        String base = model.base(uri);
        String needle = q.trim().toLowerCase(Locale.ROOT);
        Map<String, RepoView> local = new LinkedHashMap<>();
        model.publicRepositories(p.space()).forEach(r -> local.put(base + r.actorPath(), r));
        List<String> found = model.inventory(p, base).stream()
                .filter(id -> {
                    RepoView r = local.get(id);
                    if (r != null) {
                        return r.name().toLowerCase(Locale.ROOT).contains(needle)
                                || (r.description() != null
                                        && r.description()
                                                .toLowerCase(Locale.ROOT)
                                                .contains(needle));
                    }
                    String path = Objects.requireNonNullElse(URI.create(id).getPath(), "");
                    return path.substring(path.lastIndexOf('/') + 1)
                            .toLowerCase(Locale.ROOT)
                            .contains(needle);
                })
                .toList();
        return Docs.activity(Docs.collection(
                base,
                base + p.path() + "/search/repositories?q="
                        + java.net.URLEncoder.encode(q, java.nio.charset.StandardCharsets.UTF_8),
                found));
    }

    /** One activity of the outbox, by its id (what an Announce names). */
    @GET
    @Path("activities/{activityId}")
    @JsonShape(ActivityJson.Activity.class)
    public Response activity(
            @PathParam("store") String slug, @PathParam("activityId") String activityId, @Context UriInfo uri) {
        Model.Published p = model.store(slug);
        String base = model.base(uri);
        return Docs.activity(outboxes.activity(p.path() + "/activities/" + activityId)
                .map(a -> Outboxes.render(a.template(), base))
                .orElseThrow(() -> dev.atrium.kernel.api.ApiException.notFound("activity not found")));
    }

    @POST
    @Path("inbox")
    @SelfAuthenticated
    @NotJson
    public Response inbox(
            @PathParam("store") String slug, @Context UriInfo uri, @Context HttpHeaders headers, InputStream body) {
        Model.Published p = model.store(slug);
        return inbox.receive(p.path(), model.base(uri), Docs.target(uri), Docs.headers(headers), body);
    }
}
