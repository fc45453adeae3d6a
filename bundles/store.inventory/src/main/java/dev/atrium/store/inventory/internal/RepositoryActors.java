package dev.atrium.store.inventory.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.SelfAuthenticated;
import dev.atrium.store.ap.api.ActorKeys;
import dev.atrium.store.inventory.internal.Directory.RepoView;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * Canonical Repository actors, {@code /ap/repos/:owner/:repo} (every field of the spec's table), with their outbox,
 * followers, the stores that list them, and the inbox (Follow/Undo, signed). Only public repositories are actors; a
 * private or missing one is 404 alike. {@code :owner} is the workspace slug (a username stands for its default workspace
 * and is redirected to the canonical actor).
 */
@Component(service = RepositoryActors.class)
@KernelResource
@Path("/ap/repos/{owner}/{repo}")
@Anonymous
public class RepositoryActors {

    private final Model model;
    private final Outboxes outboxes;
    private final Inbox inbox;
    private final ActorKeys keys;

    @Activate
    public RepositoryActors(
            @Reference Model model, @Reference Outboxes outboxes, @Reference Inbox inbox, @Reference ActorKeys keys) {
        this.model = model;
        this.outboxes = outboxes;
        this.inbox = inbox;
        this.keys = keys;
    }

    @GET
    @JsonShape(ActivityJson.RepositoryActor.class)
    public Response actor(@PathParam("owner") String owner, @PathParam("repo") String name, @Context UriInfo uri) {
        RepoView r = model.publicRepository(owner, name);
        String base = model.base(uri);
        if (!r.owner().equals(owner)) {
            return Docs.redirect(base + r.actorPath());
        }
        String actor = base + r.actorPath();
        String git = base + "/git/" + r.owner() + "/" + r.name() + ".git";
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", Docs.context(base));
        m.put("id", actor);
        m.put("type", "Repository");
        m.put("name", r.name());
        m.put("summary", r.description() == null ? "" : r.description());
        m.put("inbox", actor + "/inbox");
        m.put("outbox", actor + "/outbox");
        m.put("followers", actor + "/followers");
        m.put("cloneUri", List.of(git));
        m.put("pushUri", List.of(git));
        m.put("published", r.createdAt().toString());
        m.put("updated", r.updatedAt().toString());
        m.put("url", base + "/@" + r.owner() + "/" + r.name());
        m.put("stores", actor + "/stores");
        m.put("defaultBranchRef", "refs/heads/" + r.defaultBranch());
        if (r.defaultBranchHash() != null) {
            m.put("defaultBranchHash", r.defaultBranchHash());
        }
        ActorKeys.ActorKey key = keys.keyOf(actor);
        m.put("publicKey", Map.of("id", key.keyId(), "owner", actor, "publicKeyPem", key.publicKeyPem()));
        return Docs.activity(m);
    }

    /**
     * The repository's public key as a document of its own (its {@code publicKey.id}): servers that know no
     * {@code Repository} actor type verify the repository's signatures with it.
     */
    @GET
    @Path("main-key")
    @JsonShape(ActivityJson.Key.class)
    public Response key(@PathParam("owner") String owner, @PathParam("repo") String name, @Context UriInfo uri) {
        RepoView r = model.publicRepository(owner, name);
        String base = model.base(uri);
        if (!r.owner().equals(owner)) {
            return Docs.redirect(base + r.actorPath() + "/main-key");
        }
        String actor = base + r.actorPath();
        ActorKeys.ActorKey key = keys.keyOf(actor);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", List.of("https://w3id.org/security/v1"));
        m.put("id", key.keyId());
        m.put("type", "CryptographicKey");
        m.put("owner", actor);
        m.put("publicKeyPem", key.publicKeyPem());
        return Docs.activity(m);
    }

    @GET
    @Path("outbox")
    @JsonShape(ActivityJson.Outbox.class)
    public Response outbox(
            @PathParam("owner") String owner,
            @PathParam("repo") String name,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @Context UriInfo uri) {
        RepoView r = model.publicRepository(owner, name);
        String base = model.base(uri);
        String path = r.actorPath();
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
            @PathParam("owner") String owner,
            @PathParam("repo") String name,
            @QueryParam("page") String page,
            @QueryParam("limit") String limit,
            @Context UriInfo uri) {
        RepoView r = model.publicRepository(owner, name);
        String base = model.base(uri);
        String path = r.actorPath();
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
    @Path("stores")
    @JsonShape(ActivityJson.Collection.class)
    public Response stores(@PathParam("owner") String owner, @PathParam("repo") String name, @Context UriInfo uri) {
        RepoView r = model.publicRepository(owner, name);
        String base = model.base(uri);
        return Docs.activity(Docs.collection(
                base,
                base + r.actorPath() + "/stores",
                model.storesOf(r, base).stream()
                        .map(s -> base + Model.storePath(s.slug()))
                        .toList()));
    }

    /** One activity of the outbox, by its id (what an Announce names). */
    @GET
    @Path("activities/{activityId}")
    @JsonShape(ActivityJson.Activity.class)
    public Response activity(
            @PathParam("owner") String owner,
            @PathParam("repo") String name,
            @PathParam("activityId") String activityId,
            @Context UriInfo uri) {
        RepoView r = model.publicRepository(owner, name);
        String base = model.base(uri);
        return Docs.activity(outboxes.activity(r.actorPath() + "/activities/" + activityId)
                .map(a -> Outboxes.render(a.template(), base))
                .orElseThrow(() -> dev.atrium.kernel.api.ApiException.notFound("activity not found")));
    }

    @POST
    @Path("inbox")
    @SelfAuthenticated
    @NotJson
    public Response inbox(
            @PathParam("owner") String owner,
            @PathParam("repo") String name,
            @Context UriInfo uri,
            @Context HttpHeaders headers,
            InputStream body) {
        RepoView r = model.publicRepository(owner, name);
        return inbox.receive(r.actorPath(), model.base(uri), Docs.target(uri), Docs.headers(headers), body);
    }
}
