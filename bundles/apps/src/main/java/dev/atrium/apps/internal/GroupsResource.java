package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.apps.internal.AppStore.Group;
import dev.atrium.apps.internal.AppStore.GroupObject;
import dev.atrium.apps.internal.GroupReconciler.Outcome;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Ids;
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
import dev.atrium.services.api.ServiceControl;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
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
 * {@code /api/spaces/:spaceId/groups}: a group is a desired state (a manifest) and the inventory applying it made.
 * Plan is a diff that changes nothing; apply converges (also after a crash half way); uninstall drains and deletes.
 */
@Component(service = GroupsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/groups")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class GroupsResource {

    static final String NOT_FOUND = "group not found";
    private static final String READ = AppDeploymentsResource.READ;
    private static final String WRITE = AppDeploymentsResource.WRITE;

    private final OwnerScope ownerScope;
    private final AppStore store;
    private final Groups groups;
    private final ServiceControl services;
    private final RepositoryRegistry repositories;
    private final PublicUrls urls;

    @Activate
    public GroupsResource(
            @Reference OwnerScope ownerScope,
            @Reference AppStore store,
            @Reference Groups groups,
            @Reference ServiceControl services,
            @Reference RepositoryRegistry repositories,
            @Reference PublicUrls urls) {
        this.urls = urls;
        this.ownerScope = ownerScope;
        this.store = store;
        this.groups = groups;
        this.services = services;
        this.repositories = repositories;
    }

    @GET
    @RequiresScope(READ)
    @JsonShape(AppsJson.GroupPage.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                "groups",
                store.groups(space.id(), page.limit(), page.offset()).stream()
                        .map(GroupsResource::view)
                        .toList());
        m.put("total", store.countGroups(space.id()));
        m.put("limit", page.limit());
        m.put("offset", page.offset());
        return m;
    }

    @POST
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.GroupOne.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(AppsJson.GroupCreate.class) JsonNode body) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("name", "metadata", "manifest"));
        String name = b.text("name", 1, 32);
        Groups.checkName(name);
        ObjectNode metadata = metadata(body.get("metadata"));
        String manifest = manifestText(body.get("manifest"));
        if (manifest != null) {
            AppDeployments.parse(manifest);
        }
        Group g = store.createGroup(space.id(), name, Ids.id("grp"), metadata)
                .orElseThrow(() -> ApiException.conflict("this workspace has a group named " + name));
        if (manifest != null) {
            store.setDesired(g.id(), manifest);
            g = store.groupById(g.id()).orElseThrow();
        }
        return Response.status(201).entity(Map.of("group", view(g))).build();
    }

    @POST
    @Path("plan")
    @RequiresScope(READ)
    @JsonShape(AppsJson.PlanOne.class)
    public Map<String, Object> planByName(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(AppsJson.PlanRequest.class) JsonNode body) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("group_name", "manifest"));
        String name = b.text("group_name", 1, 32);
        Groups.checkName(name);
        return Map.of(
                "plan",
                groups.plan(space, name, store.groupByName(space.id(), name), manifestText(body.get("manifest"))));
    }

    @POST
    @Path("apply")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Applied.class)
    public Map<String, Object> applyByName(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @JsonShape(AppsJson.ApplyRequest.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("group_name", "manifest", "source"));
        String name = b.text("group_name", 1, 32);
        return applied(Errors.api(() -> groups.apply(
                caller, space, name, manifestText(body.get("manifest")), source(body), urls.base(uri.getBaseUri()))));
    }

    @POST
    @Path("uninstall")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Uninstalled.class)
    public Map<String, Object> uninstallByName(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(AppsJson.UninstallRequest.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("group_name"));
        String name = b.text("group_name", 1, 32);
        Group g = store.groupByName(space.id(), name).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        return uninstalled(Errors.api(() -> groups.uninstall(caller, space, g)));
    }

    @GET
    @Path("{appGroupId}")
    @RequiresScope(READ)
    @JsonShape(AppsJson.GroupDetail.class)
    public Map<String, Object> get(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId) {
        Group g = find(sc, spaceId, groupId);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("group", view(g));
        m.put("inventory", inventory(g, null));
        return m;
    }

    @DELETE
    @Path("{appGroupId}")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Uninstalled.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        Group g = store.group(space.id(), groupId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        return uninstalled(Errors.api(() -> groups.uninstall(caller, space, g)));
    }

    @PATCH
    @Path("{appGroupId}/metadata")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.GroupOne.class)
    public Map<String, Object> metadata(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId,
            @JsonShape(AppsJson.Metadata.class) JsonNode body) {
        Group g = find(sc, spaceId, groupId);
        NulText.reject(body);
        JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("metadata"));
        ObjectNode patch = metadata(body.get("metadata"));
        ObjectNode merged = g.metadata().deepCopy();
        patch.fields().forEachRemaining(e -> {
            if (e.getValue().isNull()) {
                merged.remove(e.getKey());
            } else {
                merged.set(e.getKey(), e.getValue());
            }
        });
        if (merged.toString().length() > 16 * 1024) {
            throw ApiException.badRequest("a group's metadata is at most 16 KiB of JSON");
        }
        store.setMetadata(g.id(), merged);
        return Map.of("group", view(store.groupById(g.id()).orElseThrow()));
    }

    @GET
    @Path("{appGroupId}/desired")
    @RequiresScope(READ)
    @JsonShape(AppsJson.DesiredOne.class)
    public Map<String, Object> desired(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId) {
        Group g = find(sc, spaceId, groupId);
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("manifest", g.desired());
        d.put("format", "yaml");
        return Map.of("desired", d);
    }

    @PUT
    @Path("{appGroupId}/desired")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.DesiredOne.class)
    public Map<String, Object> replaceDesired(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId,
            @JsonShape(AppsJson.DesiredPut.class) JsonNode body) {
        Group g = find(sc, spaceId, groupId);
        NulText.reject(body);
        JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("manifest"));
        String text = manifestText(body.get("manifest"));
        if (text == null) {
            throw ApiException.badRequest("manifest is required: YAML text or a JSON object");
        }
        AppDeployments.parse(text);
        store.setDesired(g.id(), text);
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("manifest", text);
        d.put("format", "yaml");
        return Map.of("desired", d);
    }

    @GET
    @Path("{appGroupId}/resources")
    @RequiresScope(READ)
    @JsonShape(AppsJson.Items.class)
    public Map<String, Object> resources(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId) {
        return Map.of("items", inventory(find(sc, spaceId, groupId), GroupReconciler.RESOURCE));
    }

    @GET
    @Path("{appGroupId}/services")
    @RequiresScope(READ)
    @JsonShape(AppsJson.Items.class)
    public Map<String, Object> services(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId) {
        return Map.of("items", inventory(find(sc, spaceId, groupId), GroupReconciler.SERVICE));
    }

    @GET
    @Path("{appGroupId}/deployments")
    @RequiresScope(READ)
    @JsonShape(AppsJson.Page.class)
    public Map<String, Object> deployments(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        Group g = find(sc, spaceId, groupId);
        return AppDeploymentsResource.page(store, g.spaceId(), g.id(), PageRequest.of(limit, offset));
    }

    /** A newer commit of the group's branch than the one applied, when there is one. */
    @GET
    @Path("{appGroupId}/updates")
    @RequiresScope(READ)
    @JsonShape(AppsJson.Updates.class)
    public Map<String, Object> updates(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId) {
        Caller caller = Caller.from(sc);
        Group g = find(sc, spaceId, groupId);
        List<Map<String, Object>> out = new ArrayList<>();
        ObjectNode s = g.source();
        if (s != null
                && "branch".equals(s.path("ref_type").asText())
                && s.path("resolved_repo_id").isTextual()) {
            try {
                var repo = repositories
                        .readable(caller, s.path("resolved_repo_id").asText())
                        .repository();
                String now = repositories.resolveCommit(
                        repo, "refs/heads/" + s.path("ref").asText());
                if (!now.equals(s.path("commit_sha").asText())) {
                    Map<String, Object> u = new LinkedHashMap<>();
                    u.put("kind", "commit");
                    u.put("ref", s.path("ref").asText());
                    u.put("current", s.path("commit_sha").asText());
                    u.put("available", now);
                    out.add(u);
                }
            } catch (ApiException e) {
                // the repository or branch is gone, or no longer readable: nothing newer to offer
            }
        }
        return Map.of("updates", out);
    }

    @POST
    @Path("{appGroupId}/plan")
    @RequiresScope(READ)
    @JsonShape(AppsJson.PlanOne.class)
    public Map<String, Object> plan(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId,
            @JsonShape(AppsJson.DesiredPut.class) JsonNode body) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        Group g = store.group(space.id(), groupId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        String text = null;
        if (body != null && !body.isNull()) {
            NulText.reject(body);
            JsonBody.of(body);
            AppDeploymentsResource.unknownFields(body, Set.of("manifest"));
            text = manifestText(body.get("manifest"));
        }
        return Map.of("plan", groups.plan(space, g.name(), java.util.Optional.of(g), text));
    }

    @POST
    @Path("{appGroupId}/apply")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Applied.class)
    public Map<String, Object> apply(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @PathParam("appGroupId") String groupId,
            @JsonShape(AppsJson.ApplyRequest.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        Group g = store.group(space.id(), groupId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        String text = null;
        JsonNode source = null;
        if (body != null && !body.isNull()) {
            NulText.reject(body);
            JsonBody.of(body);
            AppDeploymentsResource.unknownFields(body, Set.of("manifest", "source"));
            text = manifestText(body.get("manifest"));
            source = source(body);
        }
        String t = text;
        JsonNode s = source;
        String self = urls.base(uri.getBaseUri());
        return applied(Errors.api(() -> groups.apply(caller, space, g.name(), t, s, self)));
    }

    // ------------------------------------------------------------------ helpers

    private Group find(SecurityContext sc, String spaceId, String groupId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return store.group(space.id(), groupId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    private static JsonNode source(JsonNode body) {
        JsonNode s = body.get("source");
        if (s == null || s.isNull()) {
            return null;
        }
        if (!s.isObject()) {
            throw ApiException.badRequest("source must be an object {repository_id or repository_url, ref, ref_type}");
        }
        AppDeploymentsResource.unknownFields(s, Set.of("kind", "repository_id", "repository_url", "ref", "ref_type"));
        return s;
    }

    private static ObjectNode metadata(JsonNode m) {
        if (m == null || m.isNull()) {
            return AppStore.JSON.createObjectNode();
        }
        if (!m.isObject()) {
            throw ApiException.badRequest("metadata must be a JSON object");
        }
        if (m.toString().length() > 16 * 1024) {
            throw ApiException.badRequest("a group's metadata is at most 16 KiB of JSON");
        }
        return (ObjectNode) m;
    }

    /** A manifest given as YAML text, or as a JSON object (JSON is YAML). */
    static String manifestText(JsonNode m) {
        if (m == null || m.isNull()) {
            return null;
        }
        if (m.isTextual()) {
            return m.textValue();
        }
        if (m.isObject()) {
            return m.toString();
        }
        throw ApiException.badRequest("manifest must be YAML text or a JSON object");
    }

    private List<Map<String, Object>> inventory(Group g, String kind) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (GroupObject o : store.objects(g.id())) {
            if (kind != null && !kind.equals(o.kind())) {
                continue;
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", o.kind());
            m.put("key", o.key());
            m.put("id", o.objectId());
            m.put("name", GroupReconciler.OAUTH.equals(o.kind()) ? null : g.name() + "-" + o.key());
            m.put(
                    "hostname",
                    GroupReconciler.SERVICE.equals(o.kind())
                            ? services.service(o.objectId())
                                    .map(ServiceControl.ServiceInfo::hostname)
                                    .orElse(null)
                            : null);
            m.put(
                    "type",
                    GroupReconciler.RESOURCE.equals(o.kind())
                            ? o.detail().path("type").asText()
                            : null);
            out.add(m);
        }
        return out;
    }

    static Map<String, Object> applied(Groups.Result r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("group", view(r.group()));
        m.put(
                "apply_result",
                Map.of("applied", r.outcome().applied(), "skipped", r.outcome().skipped()));
        return m;
    }

    static Map<String, Object> uninstalled(Outcome o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("deleted", true);
        m.put("apply_result", Map.of("applied", o.applied(), "skipped", o.skipped()));
        return m;
    }

    static Map<String, Object> view(Group g) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", g.id());
        m.put("space_id", g.spaceId());
        m.put("name", g.name());
        m.put("metadata", g.metadata());
        m.put("source", g.source());
        m.put("provider", g.provider());
        m.put("current_app_deployment_id", g.currentAppDeploymentId());
        m.put("has_desired", g.desired() != null);
        m.put("applied_at", g.appliedAt() == null ? null : g.appliedAt().toString());
        m.put("created_at", g.createdAt().toString());
        m.put("updated_at", g.updatedAt().toString());
        return m;
    }
}
