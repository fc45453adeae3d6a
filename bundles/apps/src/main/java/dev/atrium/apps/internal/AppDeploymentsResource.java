package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.apps.internal.AppStore.AppDeployment;
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
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
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
 * {@code /api/spaces/:spaceId/app-deployments}: deploy an app from a Git ref, its history, rollback, and the rollout's
 * controls. The workspace is the kernel's to prove; a deployment is looked up inside it, so another Principal's is the
 * same 404 as a missing one.
 */
@Component(service = AppDeploymentsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/app-deployments")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class AppDeploymentsResource {

    static final String READ = "repos:read";
    static final String WRITE = "repos:write";
    static final String NOT_FOUND = "app deployment not found";
    private static final Set<String> FIELDS =
            Set.of("group_name", "source", "env", "provider", "strategy", "canary", "approve");
    private static final Set<String> APPROVALS = Set.of("oauth", "source");

    private final OwnerScope ownerScope;
    private final AppStore store;
    private final AppDeployments flow;
    private final Rollouts rollouts;
    private final PublicUrls urls;

    @Activate
    public AppDeploymentsResource(
            @Reference OwnerScope ownerScope,
            @Reference AppStore store,
            @Reference AppDeployments flow,
            @Reference Rollouts rollouts,
            @Reference PublicUrls urls) {
        this.urls = urls;
        this.ownerScope = ownerScope;
        this.store = store;
        this.flow = flow;
        this.rollouts = rollouts;
    }

    @POST
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Created.class)
    public Response create(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @JsonShape(AppsJson.Create.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        AppDeployments.Request r = request(body, urls.base(uri.getBaseUri()));
        AppDeployments.Created created = Errors.api(() -> flow.create(caller, space, r));
        return Response.status(201).entity(created(created)).build();
    }

    @GET
    @RequiresScope(READ)
    @JsonShape(AppsJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return page(store, space.id(), null, PageRequest.of(limit, offset));
    }

    /** A page of app deployments of a workspace, or of one of its groups (newest first): both listings' answer. */
    static Map<String, Object> page(AppStore store, String spaceId, String groupId, PageRequest page) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                "app_deployments",
                store.deployments(spaceId, groupId, page.limit(), page.offset()).stream()
                        .map(AppDeploymentsResource::view)
                        .toList());
        m.put("total", store.countDeployments(spaceId, groupId));
        m.put("limit", page.limit());
        m.put("offset", page.offset());
        return m;
    }

    @GET
    @Path("{id}")
    @RequiresScope(READ)
    @JsonShape(AppsJson.One.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        return Map.of("app_deployment", view(find(sc, spaceId, id)));
    }

    @DELETE
    @Path("{id}")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Deleted.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        AppDeployment d = find(sc, spaceId, id);
        if (Rollouts.ACTIVE.contains(d.rollout().path("state").asText()) || "applying".equals(d.status())) {
            throw ApiException.conflict("the deployment's rollout is still "
                    + d.rollout().path("state").asText() + ": promote or abort it first");
        }
        store.deleteDeployment(d.spaceId(), d.id());
        return Map.of("deleted", true);
    }

    @POST
    @Path("{id}/rollback")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Created.class)
    public Response rollback(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("id") String id,
            @JsonShape(AppsJson.Approve.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        AppDeployment d = store.deployment(space.id(), id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        Set<String> approved = Set.of();
        if (body != null && !body.isNull()) {
            NulText.reject(body);
            JsonBody.of(body);
            unknownFields(body, Set.of("approve"));
            approved = approvals(body.get("approve"));
        }
        Set<String> ok = approved;
        AppDeployments.Created created = Errors.api(() -> flow.rollback(caller, space, d, ok));
        return Response.status(201).entity(created(created)).build();
    }

    @GET
    @Path("{id}/rollout")
    @RequiresScope(READ)
    @JsonShape(AppsJson.RolloutOne.class)
    public Map<String, Object> rollout(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        return Map.of("rollout", Rollouts.view(find(sc, spaceId, id).rollout()));
    }

    @POST
    @Path("{id}/rollout/pause")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.RolloutOne.class)
    public Map<String, Object> pause(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        return control(find(sc, spaceId, id), "pause");
    }

    @POST
    @Path("{id}/rollout/resume")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.RolloutOne.class)
    public Map<String, Object> resume(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        return control(find(sc, spaceId, id), "resume");
    }

    @POST
    @Path("{id}/rollout/abort")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.RolloutOne.class)
    public Map<String, Object> abort(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        return control(find(sc, spaceId, id), "abort");
    }

    @POST
    @Path("{id}/rollout/promote")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.RolloutOne.class)
    public Map<String, Object> promote(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("id") String id) {
        return control(find(sc, spaceId, id), "promote");
    }

    private Map<String, Object> control(AppDeployment d, String action) {
        ObjectNode r = Errors.api(() -> rollouts.control(d, action));
        return Map.of("rollout", Rollouts.view(r));
    }

    private AppDeployment find(SecurityContext sc, String spaceId, String id) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return store.deployment(space.id(), id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    // ------------------------------------------------------------------ request and views

    /** The create body as a request answered under the public base URL {@code selfBase} (its repository URLs are local). */
    static AppDeployments.Request request(JsonNode body, String selfBase) {
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        unknownFields(body, FIELDS);
        String group = b.optionalText("group_name", 1, 32).orElse(null);
        if (group != null) {
            Groups.checkName(group);
        }
        JsonNode s = body.get("source");
        if (s == null || !s.isObject()) {
            throw ApiException.badRequest("source is required: {\"kind\": \"git_ref\", \"repository_id\" or"
                    + " \"repository_url\", \"ref\", \"ref_type\"}");
        }
        JsonBody src = JsonBody.of(s);
        unknownFields(s, Set.of("kind", "repository_id", "repository_url", "ref", "ref_type"));
        String kind = src.optionalText("kind", 1, 40).orElse("git_ref");
        if (!"git_ref".equals(kind)) {
            throw ApiException.badRequest("source.kind must be git_ref");
        }
        String repoId = src.optionalText("repository_id", 1, 200).orElse(null);
        String repoUrl = src.optionalText("repository_url", 1, 2000).orElse(null);
        if ((repoId == null) == (repoUrl == null)) {
            throw ApiException.badRequest("source needs exactly one of repository_id and repository_url");
        }
        String ref = src.text("ref", 1, 250);
        String refType = src.oneOf("ref_type", Sources.REF_TYPES).orElse("branch");
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode e = body.get("env");
        if (e != null && !e.isNull()) {
            if (!e.isObject()) {
                throw ApiException.badRequest("env must be an object of NAME: value strings");
            }
            e.fields().forEachRemaining(f -> {
                if (!f.getKey().matches("[A-Za-z_][A-Za-z0-9_]{0,127}")
                        || !f.getValue().isTextual()) {
                    throw ApiException.badRequest("env." + f.getKey()
                            + ": env names are letters, digits and _ (not starting with a digit), values strings");
                }
                env.put(f.getKey(), f.getValue().textValue());
            });
        }
        String provider = "workerd";
        JsonNode p = body.get("provider");
        if (p != null && !p.isNull()) {
            if (!p.isObject()) {
                throw ApiException.badRequest("provider must be an object {\"name\"}");
            }
            provider = JsonBody.of(p).optionalText("name", 1, 100).orElse("workerd");
        }
        String strategy = b.oneOf("strategy", Set.of("direct", "canary")).orElse("direct");
        ArrayNode steps = steps(body.get("canary"), strategy);
        return new AppDeployments.Request(
                group,
                repoId,
                repoUrl,
                ref,
                refType,
                env,
                provider,
                strategy,
                steps,
                approvals(body.get("approve")),
                selfBase);
    }

    /** The default share of server errors past which a canary is aborted (percent of its requests). */
    static final int MAX_ERROR_PERCENT = 5;

    private static ArrayNode steps(JsonNode canary, String strategy) {
        ArrayNode steps = AppStore.JSON.createArrayNode();
        if (canary == null || canary.isNull()) {
            steps.addObject().put("weight", 10).putNull("hold_seconds").put("max_error_percent", MAX_ERROR_PERCENT);
            steps.addObject().put("weight", 50).putNull("hold_seconds").put("max_error_percent", MAX_ERROR_PERCENT);
            return steps;
        }
        if (!"canary".equals(strategy)) {
            throw ApiException.badRequest("canary applies only to strategy canary");
        }
        if (!canary.isObject()) {
            throw ApiException.badRequest("canary must be an object {\"steps\", \"max_error_percent\"}");
        }
        unknownFields(canary, Set.of("steps", "max_error_percent"));
        int maxErrors = MAX_ERROR_PERCENT;
        JsonNode m = canary.get("max_error_percent");
        if (m != null && !m.isNull()) {
            if (!m.isIntegralNumber() || !m.canConvertToInt() || m.intValue() < 1 || m.intValue() > 100) {
                throw ApiException.badRequest("canary.max_error_percent is a whole number from 1 to 100");
            }
            maxErrors = m.intValue();
        }
        JsonNode list = canary.get("steps");
        if (list == null || !list.isArray() || list.isEmpty() || list.size() > 10) {
            throw ApiException.badRequest("canary.steps must be 1-10 steps {\"weight\": 1-99, \"hold_seconds\"}");
        }
        int last = 0;
        for (JsonNode st : list) {
            if (!st.isObject()) {
                throw ApiException.badRequest("each canary step is an object {\"weight\", \"hold_seconds\"}");
            }
            unknownFields(st, Set.of("weight", "hold_seconds"));
            JsonNode w = st.path("weight");
            JsonNode h = st.path("hold_seconds");
            if (!w.isIntegralNumber()
                    || !w.canConvertToInt()
                    || w.intValue() < 1
                    || w.intValue() > 99
                    || w.intValue() <= last) {
                throw ApiException.badRequest(
                        "each canary step's weight is a whole number from 1 to 99, larger than" + " the step's before");
            }
            if (!h.isMissingNode()
                    && !h.isNull()
                    && (!h.isIntegralNumber() || h.longValue() < 0 || h.longValue() > 7 * 24 * 3600)) {
                throw ApiException.badRequest(
                        "hold_seconds is a whole number of seconds up to a week, or null to hold" + " until promoted");
            }
            last = w.intValue();
            ObjectNode o = steps.addObject().put("weight", w.intValue());
            if (h.isIntegralNumber()) {
                o.put("hold_seconds", h.longValue());
            } else {
                o.putNull("hold_seconds");
            }
            o.put("max_error_percent", maxErrors);
        }
        return steps;
    }

    private static Set<String> approvals(JsonNode a) {
        Set<String> out = new LinkedHashSet<>();
        if (a == null || a.isNull()) {
            return out;
        }
        if (!a.isArray()) {
            throw ApiException.badRequest("approve must be an array of oauth, source");
        }
        for (JsonNode x : a) {
            if (!x.isTextual() || !APPROVALS.contains(x.textValue())) {
                throw ApiException.badRequest("approve must be an array of oauth, source");
            }
            out.add(x.textValue());
        }
        return out;
    }

    static void unknownFields(JsonNode body, Set<String> allowed) {
        body.fieldNames().forEachRemaining(f -> {
            if (!allowed.contains(f)) {
                throw ApiException.badRequest(
                        "unknown field '" + f + "'; allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        });
    }

    static Map<String, Object> created(AppDeployments.Created c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("app_deployment", view(c.deployment()));
        m.put(
                "apply_result",
                Map.of("applied", c.outcome().applied(), "skipped", c.outcome().skipped()));
        return m;
    }

    static Map<String, Object> view(AppDeployment d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", d.id());
        m.put("group", Map.of("id", d.groupId(), "name", d.groupName()));
        m.put("status", d.status());
        m.put("manifest_version", d.manifestVersion());
        m.put("hostnames", d.hostnames());
        m.put("rollback_of_app_deployment_id", d.rollbackOf());
        Map<String, Object> snap = new LinkedHashMap<>();
        snap.put("state", d.snapshot().path("state").asText());
        snap.put("rollback_ready", d.snapshot().path("rollback_ready").asBoolean());
        snap.put("format", d.snapshot().path("format").asText());
        m.put("snapshot", snap);
        m.put("source", d.source());
        m.put("created_at", d.createdAt().toString());
        m.put("updated_at", d.updatedAt().toString());
        return m;
    }
}
