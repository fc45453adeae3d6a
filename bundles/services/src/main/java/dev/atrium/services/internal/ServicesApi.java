package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.services.internal.ServiceStore.EnvRow;
import dev.atrium.services.internal.ServiceStore.LinkRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
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
import javax.ws.rs.sse.Sse;
import javax.ws.rs.sse.SseEventSink;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/services…}: every route of the spec's "Services, domains" table but the custom domains (the
 * {@code services.domains} bundle serves those), plus canary promote and abort. A service addressed by its id is
 * resolved to its workspace and proven through the kernel's {@link OwnerScope}: another Principal's service,
 * deployment or logs answer exactly like missing ones (404). Deploying code is what
 * {@code repos:write} allows (there is no services scope in the token scopes); reading needs {@code repos:read}.
 *
 * <p>Why one class of about 760 lines: the spec's Services table without its custom domains, 23 routes that share one
 * owner check and one way of applying a change; split by route family, each part would repeat both. What the routes
 * change they change through {@link ServiceEdits} and {@link DeployFlow}, which services.api's {@code ServiceControl}
 * ({@link ServiceControls}) shares; this class parses the bodies and shapes the answers.
 */
@Component(service = ServicesApi.class)
@KernelResource
@Path("/api/services")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ServicesApi {

    static final String NOT_FOUND = "service not found";
    static final String READ = "repos:read";
    static final String WRITE = "repos:write";
    static final Pattern ENV_NAME = ServiceEdits.ENV_NAME;

    private final OwnerScope ownerScope;
    private final ServiceStore store;
    private final Deployer deployer;
    private final DeployFlow flow;
    private final ResourceDirectory directory;
    private final ServiceEdits edits;

    @Activate
    public ServicesApi(
            @Reference OwnerScope ownerScope,
            @Reference ServiceStore store,
            @Reference Deployer deployer,
            @Reference DeployFlow flow,
            @Reference ResourceDirectory directory,
            @Reference ServiceEdits edits) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.deployer = deployer;
        this.flow = flow;
        this.directory = directory;
        this.edits = edits;
    }

    // ------------------------------------------------------------------ services

    @GET
    @RequiresScope(READ)
    @JsonShape(ServiceJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @QueryParam("space_id") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        Caller caller = Caller.from(sc);
        PageRequest page = PageRequest.of(limit, offset);
        if (spaceId != null && !spaceId.isBlank()) {
            return bySpace(caller, spaceId, page);
        }
        // every service of the Principal whose workspace the kernel still proves it owns
        Map<String, Boolean> owned = new HashMap<>();
        List<Map<String, Object>> all = new ArrayList<>();
        for (Service s : store.byPrincipal(caller.principalId())) {
            if (owned.computeIfAbsent(s.spaceId(), id -> edits.owns(caller, id))) {
                all.add(view(s));
            }
        }
        List<Map<String, Object>> slice =
                all.subList(Math.min(page.offset(), all.size()), Math.min(page.offset() + page.limit(), all.size()));
        return page.body("services", new ArrayList<>(slice), all.size());
    }

    @GET
    @Path("space/{spaceId}")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.Page.class)
    public Map<String, Object> space(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        return bySpace(Caller.from(sc), spaceId, PageRequest.of(limit, offset));
    }

    private Map<String, Object> bySpace(Caller caller, String spaceId, PageRequest page) {
        SpaceRef space = ownerScope.require(caller, spaceId);
        return page.body(
                "services",
                store.bySpace(space.id(), page.limit(), page.offset()).stream()
                        .map(this::view)
                        .toList(),
                store.countBySpace(space.id()));
    }

    @POST
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.One.class)
    public Response create(@Context SecurityContext sc, @JsonShape(ServiceJson.Create.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String name = b.text("name", 1, 100);
        String spaceId =
                b.optionalText("space_id", 1, 200).orElseThrow(() -> ApiException.badRequest("space_id is required"));
        Optional<String> slug = b.optionalText("slug", 1, 63);
        slug.ifPresent(ServicesApi::checkSlug);
        SpaceRef space = ownerScope.require(caller, spaceId);
        Service s = edits.create(caller, space, name, slug.orElse(null), Slugs.from(name));
        return Response.status(201).entity(Map.of("service", view(s))).build();
    }

    @GET
    @Path("{id}")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.OneDetail.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        Service s = owned(Caller.from(sc), id);
        Map<String, Object> m = view(s);
        m.put("settings", Settings.parse(s.settings()));
        return Map.of("service", m);
    }

    @DELETE
    @Path("{id}")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!edits.delete(owned(Caller.from(sc), id))) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    @PATCH
    @Path("{id}/slug")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.One.class)
    public Map<String, Object> slug(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.SlugInput.class) JsonNode body) {
        NulText.reject(body);
        String slug = JsonBody.of(body).text("slug", 1, 63);
        checkSlug(slug);
        Service s = owned(Caller.from(sc), id);
        Service changed = applying(() -> {
            try {
                return store.setSlug(s.id(), slug);
            } catch (Sql.Conflict e) {
                throw ApiException.conflict("the slug '" + slug + "' is taken");
            }
        });
        return Map.of("service", view(changed));
    }

    private static void checkSlug(String slug) {
        String problem = Slugs.problem(slug);
        if (problem != null) {
            throw ApiException.badRequest(problem);
        }
    }

    // ------------------------------------------------------------------ settings

    @GET
    @Path("{id}/settings")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.OneSettings.class)
    public Map<String, Object> settings(@Context SecurityContext sc, @PathParam("id") String id) {
        return Map.of("settings", Settings.parse(owned(Caller.from(sc), id).settings()));
    }

    @PATCH
    @Path("{id}/settings")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.OneSettings.class)
    public Map<String, Object> patchSettings(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.RuntimeSettings.class) JsonNode body) {
        NulText.reject(body);
        JsonBody.of(body);
        Service s = owned(Caller.from(sc), id);
        ObjectNode merged = Settings.merge(Settings.parse(s.settings()), body);
        Service changed = applying(() -> store.setSettings(s.id(), merged.toString()));
        return Map.of("settings", Settings.parse(changed.settings()));
    }

    // ------------------------------------------------------------------ env

    @GET
    @Path("{id}/env")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.Variables.class)
    public Map<String, Object> env(@Context SecurityContext sc, @PathParam("id") String id) {
        return envView(owned(Caller.from(sc), id));
    }

    private Map<String, Object> envView(Service s) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (EnvRow v : store.env(s.id())) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", v.name());
            if (!v.secret()) {
                m.put("value", v.value());
            }
            m.put("secret", v.secret());
            m.put("updated_at", v.updatedAt().toString());
            out.add(m);
        }
        return Map.of("variables", out);
    }

    /** Sets the variables listed ({@code value: null} removes one); the others stay. */
    @PATCH
    @Path("{id}/env")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.Variables.class)
    public Map<String, Object> patchEnv(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.EnvInput.class) JsonNode body) {
        NulText.reject(body);
        JsonBody.of(body);
        JsonNode vars = body.get("variables");
        if (vars == null || !vars.isArray()) {
            throw ApiException.badRequest("variables must be an array of {name, value, secret}");
        }
        if (vars.size() > ServiceEdits.MAX_VARIABLES) {
            throw ApiException.badRequest("at most " + ServiceEdits.MAX_VARIABLES + " variables per request");
        }
        List<ServiceEdits.EnvChange> changes = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (JsonNode v : vars) {
            JsonBody vb = JsonBody.of(v);
            String name = vb.requiredString("name");
            if (!names.add(name)) {
                throw ApiException.badRequest("variable " + name + " is listed twice");
            }
            if (v.has("value") && !v.get("value").isNull() && !v.get("value").isTextual()) {
                throw ApiException.badRequest("the value of " + name + " must be a string (or null to remove it)");
            }
            if (!v.has("value")) {
                throw ApiException.badRequest("the value of " + name + " is required (null removes it)");
            }
            changes.add(ServiceEdits.EnvChange.checked(
                    name, vb.string("value").orElse(null), vb.bool("secret").orElse(false)));
        }
        Service s = owned(Caller.from(sc), id);
        edits.setEnv(s, changes, false);
        return envView(s);
    }

    // ------------------------------------------------------------------ common-env links

    @GET
    @Path("{id}/common-env-links")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.Links.class)
    public Map<String, Object> links(@Context SecurityContext sc, @PathParam("id") String id) {
        return linksView(owned(Caller.from(sc), id));
    }

    private Map<String, Object> linksView(Service s) {
        List<String> names = new ArrayList<>();
        Map<String, Object> builtins = new LinkedHashMap<>();
        for (LinkRow l : store.links(s.id())) {
            if (l.builtin()) {
                builtins.put(
                        l.name(),
                        Map.of(
                                "scopes",
                                Settings.parse("{\"s\":" + l.scopes() + "}").path("s")));
            } else {
                names.add(l.name());
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("links", names);
        m.put("builtins", builtins);
        return m;
    }

    /** Replaces every link: {@code {"names": [...], "builtins": {NAME: {"scopes": [...]}}}} (both optional, absent = none). */
    @PUT
    @Path("{id}/common-env-links")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.Links.class)
    public Map<String, Object> replaceLinks(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.LinksReplace.class) JsonNode body) {
        NulText.reject(body);
        JsonBody.of(body);
        onlyFields(body, Set.of("names", "builtins"));
        Set<String> names = names(body, "names");
        Map<String, String> builtins = builtins(body.get("builtins"), true);
        Service s = owned(Caller.from(sc), id);
        return saveLinks(s, names, builtins);
    }

    /** {@code {"add": [...], "remove": [...], "builtins": {NAME: {"scopes": [...]} | null}}}. */
    @PATCH
    @Path("{id}/common-env-links")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.Links.class)
    public Map<String, Object> patchLinks(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.LinksPatch.class) JsonNode body) {
        NulText.reject(body);
        JsonBody.of(body);
        onlyFields(body, Set.of("add", "remove", "builtins"));
        Set<String> add = names(body, "add");
        Set<String> remove = names(body, "remove");
        Map<String, String> builtins = builtins(body.get("builtins"), false);
        Service s = owned(Caller.from(sc), id);
        Set<String> names = new LinkedHashSet<>();
        Map<String, String> keptBuiltins = new LinkedHashMap<>();
        for (LinkRow l : store.links(s.id())) {
            if (l.builtin()) {
                keptBuiltins.put(l.name(), l.scopes());
            } else {
                names.add(l.name());
            }
        }
        names.addAll(add);
        names.removeAll(remove);
        builtins.forEach((k, v) -> {
            if (v == null) {
                keptBuiltins.remove(k);
            } else {
                keptBuiltins.put(k, v);
            }
        });
        return saveLinks(s, names, keptBuiltins);
    }

    private Map<String, Object> saveLinks(Service s, Set<String> names, Map<String, String> builtins) {
        List<LinkRow> rows = new ArrayList<>();
        names.forEach(n -> rows.add(new LinkRow(n, false, null)));
        builtins.forEach((n, scopes) -> rows.add(new LinkRow(n, true, scopes)));
        applying(() -> {
            store.sql().tx(c -> {
                store.replaceLinks(c, s.id(), rows);
                return null;
            });
            store.bumpRevision(s.id());
            return null;
        });
        return linksView(s);
    }

    private static void onlyFields(JsonNode body, Set<String> allowed) {
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f)) {
                throw ApiException.badRequest("unknown field '" + f + "'; this body takes "
                        + String.join(", ", allowed.stream().sorted().toList()));
            }
        }
    }

    private static Set<String> names(JsonNode body, String field) {
        Set<String> out = new LinkedHashSet<>();
        JsonNode a = body.get(field);
        if (a == null || a.isNull()) {
            return out;
        }
        if (!a.isArray() || a.size() > 500) {
            throw ApiException.badRequest(field + " must be an array of at most 500 variable names");
        }
        for (JsonNode n : a) {
            if (!n.isTextual() || !ENV_NAME.matcher(n.textValue()).matches()) {
                throw ApiException.badRequest("each name in " + field + " must match ^[A-Z_][A-Z0-9_]*$");
            }
            out.add(n.textValue());
        }
        return out;
    }

    /** Built-in links: name to the JSON array of its scopes, or to null (remove) when {@code nullRemoves} is false... */
    private static Map<String, String> builtins(JsonNode b, boolean replacing) {
        Map<String, String> out = new LinkedHashMap<>();
        if (b == null || b.isNull()) {
            return out;
        }
        if (!b.isObject()) {
            throw ApiException.badRequest("builtins must be an object mapping a variable name to {\"scopes\": [...]}");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = b.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw ApiException.badRequest("built-in name '" + e.getKey() + "' must match ^[A-Z_][A-Z0-9_]*$");
            }
            JsonNode v = e.getValue();
            if (v.isNull() && !replacing) {
                out.put(e.getKey(), null);
                continue;
            }
            JsonNode scopes = v.get("scopes");
            if (!v.isObject() || scopes == null || !scopes.isArray() || scopes.size() > 50) {
                throw ApiException.badRequest("builtins." + e.getKey() + " must be {\"scopes\": [scope names]}");
            }
            for (JsonNode sc : scopes) {
                if (!sc.isTextual()
                        || sc.textValue().isEmpty()
                        || sc.textValue().length() > 100) {
                    throw ApiException.badRequest("builtins." + e.getKey()
                            + ".scopes must hold scope names (strings of 1 to 100 characters)");
                }
            }
            out.put(e.getKey(), scopes.toString());
        }
        return out;
    }

    // ------------------------------------------------------------------ bindings

    @GET
    @Path("{id}/bindings")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.Bindings.class)
    public Map<String, Object> bindings(@Context SecurityContext sc, @PathParam("id") String id) {
        Service s = owned(Caller.from(sc), id);
        return Map.of(
                "bindings",
                directory.bindings(s.id(), s.spaceId()).stream()
                        .map(ServicesApi::bindingView)
                        .toList());
    }

    /** Makes {@code bindings} the service's whole set: {@code [{name, resource_id | resource_name, type?}]}. */
    @PATCH
    @Path("{id}/bindings")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.Bindings.class)
    public Map<String, Object> patchBindings(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.BindingsInput.class) JsonNode body) {
        NulText.reject(body);
        JsonBody.of(body);
        JsonNode list = body.get("bindings");
        if (list == null || !list.isArray() || list.size() > 100) {
            throw ApiException.badRequest(
                    "bindings must be an array of at most 100 {name, resource_id | resource_name, type?}");
        }
        List<ServiceEdits.Wanted> wanted = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (JsonNode n : list) {
            JsonBody b = JsonBody.of(n);
            String name = b.requiredString("name");
            ServiceEdits.Wanted w = ServiceEdits.Wanted.checked(
                    name,
                    b.optionalText("resource_id", 1, 200).orElse(null),
                    b.optionalText("resource_name", 1, 64).orElse(null),
                    b.optionalText("type", 1, 40).orElse(null));
            if (!names.add(name)) {
                throw ApiException.badRequest("binding " + name + " is listed twice");
            }
            wanted.add(w);
        }
        Caller caller = Caller.from(sc);
        Service s = owned(caller, id);
        SpaceRef space = ownerScope.require(caller, s.spaceId());
        List<ResourceDirectory.Bound> bound = edits.bind(caller, space, s, wanted);
        return Map.of("bindings", bound.stream().map(ServicesApi::bindingView).toList());
    }

    private static Map<String, Object> bindingView(ResourceDirectory.Bound b) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", b.bindingName());
        m.put("resource_id", b.resourceId());
        m.put("resource_name", b.resourceName());
        m.put("type", b.type());
        m.put("space_id", b.spaceId());
        m.put("permission", b.access().wire());
        return m;
    }

    // ------------------------------------------------------------------ deployments

    @POST
    @Path("{id}/deployments")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.OneDeployment.class)
    public Response deploy(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @HeaderParam("Idempotency-Key") String key,
            @JsonShape(ServiceJson.DeployInput.class) JsonNode body) {
        JsonBody.of(body);
        return flow.create(owned(Caller.from(sc), id), body, key);
    }

    /**
     * The same create with the artifact as the request's own bytes: a JSON body is read whole and held to the kernel's
     * 1 MiB, too little for a container image (busybox alone is 1 MB gzipped), so an archive is sent as it is, the other
     * fields as query parameters ({@code kind}, {@code provider}, {@code strategy}, {@code deploy_message},
     * {@code canary_percent}). The artifact's size limit is {@code maxArtifactBytes}, as for a base64 bundle.
     */
    @POST
    @Path("{id}/deployments")
    @RequiresScope(WRITE)
    @Consumes({"application/x-tar", MediaType.APPLICATION_OCTET_STREAM})
    @dev.atrium.kernel.api.BodyLimit(MAX_BINARY_ARTIFACT)
    @JsonShape(ServiceJson.OneDeployment.class)
    public Response deployBytes(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @HeaderParam("Idempotency-Key") String key,
            @QueryParam("kind") String kind,
            @QueryParam("provider") String provider,
            @QueryParam("strategy") String strategy,
            @QueryParam("deploy_message") String message,
            @QueryParam("canary_percent") String percent,
            byte[] artifact) {
        Service s = owned(Caller.from(sc), id);
        com.fasterxml.jackson.databind.node.ObjectNode body =
                com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        body.put("bundle", java.util.Base64.getEncoder().encodeToString(artifact == null ? new byte[0] : artifact));
        if (kind != null) {
            body.putObject("target").putObject("artifact").put("kind", kind);
        }
        if (provider != null) {
            body.putObject("provider").put("name", provider);
        }
        if (strategy != null) {
            body.put("strategy", strategy);
        }
        if (message != null) {
            body.put("deploy_message", message);
        }
        if (percent != null) {
            try {
                body.put("canary_percent", Integer.parseInt(percent.strip()));
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("canary_percent must be a whole number from 1 to 99");
            }
        }
        return flow.create(s, body, key);
    }

    /**
     * The most bytes a binary artifact upload may have before it is read (it is read into memory): {@code
     * maxArtifactBytes} (25 MiB) holds below it, and a larger setting is capped here.
     */
    static final long MAX_BINARY_ARTIFACT = 64L << 20;

    @GET
    @Path("{id}/deployments")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.DeploymentPage.class)
    public Map<String, Object> deployments(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        Service s = owned(Caller.from(sc), id);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "deployments",
                store.deployments(s.id(), page.limit(), page.offset()).stream()
                        .map(Views::deployment)
                        .toList(),
                store.countDeployments(s.id()));
    }

    @GET
    @Path("{id}/deployments/{deploymentId}")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.OneDeployment.class)
    public Map<String, Object> deployment(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("deploymentId") String deploymentId) {
        Service s = owned(Caller.from(sc), id);
        return Map.of(
                "deployment",
                Views.deployment(store.deployment(deploymentId)
                        .filter(d -> d.serviceId().equals(s.id()))
                        .orElseThrow(() -> ApiException.notFound("deployment not found"))));
    }

    /** {@code {"deployment_id"?}}: that deployment, or the one before the current, becomes current again. */
    @POST
    @Path("{id}/deployments/rollback")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    @JsonShape(ServiceJson.RolledBack.class)
    public Map<String, Object> rollback(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ServiceJson.Rollback.class) String text) {
        JsonNode body = JsonBody.optional(text);
        String target = null;
        if (body != null) {
            NulText.reject(body);
            target = JsonBody.of(body).optionalText("deployment_id", 1, 200).orElse(null);
        }
        DeployFlow.RolledBack r = flow.rollback(owned(Caller.from(sc), id), target);
        return Map.of("deployment", Views.deployment(r.deployment()), "rolled_back_from", r.from());
    }

    @POST
    @Path("{id}/deployments/{deploymentId}/promote")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.OneDeployment.class)
    public Map<String, Object> promote(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("deploymentId") String deploymentId) {
        return Map.of("deployment", Views.deployment(flow.endCanary(owned(Caller.from(sc), id), deploymentId, true)));
    }

    @POST
    @Path("{id}/deployments/{deploymentId}/abort")
    @RequiresScope(WRITE)
    @JsonShape(ServiceJson.OneDeployment.class)
    public Map<String, Object> abort(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("deploymentId") String deploymentId) {
        return Map.of("deployment", Views.deployment(flow.endCanary(owned(Caller.from(sc), id), deploymentId, false)));
    }

    @GET
    @Path("{id}/logs")
    @RequiresScope(READ)
    @JsonShape(ServiceJson.Logs.class)
    public Map<String, Object> logs(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("after") String after,
            @QueryParam("limit") String limit) {
        long afterSeq = number("after", after, 0, 0, Long.MAX_VALUE);
        int n = (int) number("limit", limit, 100, 1, 1000);
        Service s = owned(Caller.from(sc), id);
        List<LogLine> lines = deployer.logs(s, afterSeq, n);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("logs", lines.stream().map(Views::log).toList());
        m.put(
                "next_after",
                lines.isEmpty() ? afterSeq : lines.get(lines.size() - 1).seq());
        return m;
    }

    /** {@code Accept: text/event-stream}: the lines after {@code after} (or {@code Last-Event-ID}), then new ones as written. */
    @GET
    @Path("{id}/logs")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    @RequiresScope(READ)
    public void tail(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("after") String after,
            @HeaderParam("Last-Event-ID") String lastEventId,
            @Context SseEventSink sink,
            @Context Sse sse) {
        long afterSeq = number(
                "after", lastEventId != null && !lastEventId.isBlank() ? lastEventId : after, 0, 0, Long.MAX_VALUE);
        Service s = owned(Caller.from(sc), id);
        deployer.tails().start(deployer, s, afterSeq, sink, sse);
    }

    static long number(String name, String value, long dflt, long min, long max) {
        if (value == null || value.isBlank()) {
            return dflt;
        }
        try {
            long n = Long.parseLong(value.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest(
                name + " must be a whole number from " + min + (max == Long.MAX_VALUE ? "" : " to " + max));
    }

    // ------------------------------------------------------------------ helpers

    Service owned(Caller caller, String id) {
        return edits.owned(caller, id);
    }

    private Map<String, Object> view(Service s) {
        return Views.service(s, deployer.config().appsDomain());
    }

    private <T> T applying(Deployer.Change<T> change) {
        return deployer.applying(change);
    }
}
