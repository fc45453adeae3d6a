package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.internal.domain.CommonEnvironment;
import dev.atrium.kernel.internal.domain.Names;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import dev.atrium.kernel.internal.domain.WorkspaceRecord;
import dev.atrium.kernel.internal.domain.Workspaces;
import dev.atrium.kernel.internal.http.CapabilityDeclaration;
import dev.atrium.kernel.internal.http.Readiness;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
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
import org.osgi.framework.Bundle;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Workspaces (wire name: spaces), their model settings, sidebar, export, members and common environment. */
@Component(service = SpacesResource.class)
@KernelResource
@Path("/api/spaces")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpacesResource {

    static final Set<String> POSTURES = Set.of("standard", "restricted_egress");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Z_][A-Z0-9_]{0,127}");
    private static final String SINGLE_OWNER =
            "a workspace has exactly one owner: members cannot be added, changed or removed";

    private final Workspaces workspaces;
    private final Principals principals;
    private final CommonEnvironment env;
    private final Readiness readiness;

    @Activate
    public SpacesResource(
            @Reference Workspaces workspaces,
            @Reference Principals principals,
            @Reference CommonEnvironment env,
            @Reference Readiness readiness) {
        this.workspaces = workspaces;
        this.principals = principals;
        this.env = env;
        this.readiness = readiness;
    }

    static Map<String, Object> space(WorkspaceRecord w) {
        return Map.of("space", w.toJson());
    }

    static Map<String, Object> defaultSpace(Workspaces workspaces, Caller caller) {
        return space(workspaces
                .findDefault(caller.principalId())
                .orElseThrow(() -> ApiException.notFound("this Principal has no default workspace")));
    }

    @GET
    @JsonShape(KernelJson.SpacePage.class)
    public Map<String, Object> list(
            @Context SecurityContext sc, @QueryParam("limit") String limit, @QueryParam("offset") String offset) {
        Caller caller = Caller.from(sc);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "spaces",
                workspaces.list(caller.principalId(), page.limit(), page.offset()).stream()
                        .map(WorkspaceRecord::toJson)
                        .toList(),
                workspaces.count(caller.principalId()));
    }

    @POST
    @JsonShape(KernelJson.OneSpace.class)
    public Response create(@Context SecurityContext sc, @JsonShape(KernelJson.SpaceInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String name = b.text("name", 1, 100);
        String slug = b.string("slug").map(SpacesResource::validSlug).orElse(null);
        String description = b.optionalText("description", 0, 2000).orElse("");
        String posture = b.oneOf("security_posture", POSTURES).orElse("standard");
        WorkspaceRecord w = workspaces.create(caller.principalId(), name, slug, description, posture);
        return Response.status(201).entity(space(w)).build();
    }

    private static String validSlug(String slug) {
        String problem = Names.formProblem("slug", slug.trim(), 1, 63);
        if (problem != null) {
            throw ApiException.badRequest(problem);
        }
        return slug.trim();
    }

    @GET
    @Path("me")
    @JsonShape(KernelJson.OneSpace.class)
    public Map<String, Object> me(@Context SecurityContext sc) {
        return defaultSpace(workspaces, Caller.from(sc));
    }

    @GET
    @Path("{spaceId}")
    @JsonShape(KernelJson.OneSpace.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        return space(workspaces.get(Caller.from(sc), spaceId));
    }

    @PATCH
    @Path("{spaceId}")
    @JsonShape(KernelJson.OneSpace.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(KernelJson.SpaceInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        Workspaces.Change change = new Workspaces.Change(
                b.optionalText("name", 1, 100).orElse(null),
                b.string("slug").map(SpacesResource::validSlug).orElse(null),
                b.optionalText("description", 0, 2000).orElse(null),
                b.oneOf("security_posture", POSTURES).orElse(null),
                b.optionalText("ai_model", 1, 200).orElse(null),
                b.optionalText("ai_provider", 1, 200).orElse(null));
        return space(workspaces.update(caller, spaceId, change));
    }

    @DELETE
    @Path("{spaceId}")
    @JsonShape(KernelJson.Success.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        workspaces.delete(Caller.from(sc), spaceId);
        return Map.of("success", true);
    }

    @RequiresScope("account:read")
    @GET
    @Path("{spaceId}/model")
    @JsonShape(KernelJson.Model.class)
    public Map<String, Object> model(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        return workspaces.get(Caller.from(sc), spaceId).modelJson();
    }

    @PATCH
    @Path("{spaceId}/model")
    @JsonShape(KernelJson.Model.class)
    public Map<String, Object> updateModel(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(KernelJson.Model.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String model = b.optionalText("model", 1, 200).orElse(null);
        String provider = b.optionalText("provider", 1, 200).orElse(null);
        return workspaces
                .update(caller, spaceId, new Workspaces.Change(null, null, null, null, model, provider))
                .modelJson();
    }

    @RequiresScope("account:read")
    @GET
    @Path("{spaceId}/sidebar-items")
    @JsonShape(KernelJson.SidebarItems.class)
    public Map<String, Object> sidebar(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        WorkspaceRecord w = workspaces.get(Caller.from(sc), spaceId);
        List<Map<String, Object>> items = new ArrayList<>();
        for (Bundle b : readiness.activeCapabilities()) {
            // empty only if the bundle was replaced by one without the capability since the list was made
            CapabilityDeclaration.of(b).filter(CapabilityDeclaration::sidebar).ifPresent(capability -> {
                Map<String, Object> item = new LinkedHashMap<>();
                item.put("id", capability.id());
                item.put("label", capability.label());
                item.put("path", "/api/spaces/" + w.id() + "/" + capability.id());
                items.add(item);
            });
        }
        items.sort((x, y) -> ((String) x.get("id")).compareTo((String) y.get("id")));
        return Map.of("items", items);
    }

    @RequiresScope("*")
    @GET
    @Path("{spaceId}/export")
    @JsonShape(KernelJson.Export.class)
    public Map<String, Object> export(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        WorkspaceRecord w = workspaces.get(Caller.from(sc), spaceId);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("space", w.toJson());
        m.put("model", w.modelJson());
        m.put(
                "common_env",
                env.list(w.id()).stream()
                        .map(v -> {
                            Map<String, Object> e = new LinkedHashMap<>();
                            e.put("name", v.name());
                            e.put("secret", v.secret());
                            return e;
                        })
                        .toList());
        m.put("exported_at", Instant.now().toString());
        return m;
    }

    @RequiresScope("account:read")
    @GET
    @Path("{spaceId}/members")
    @JsonShape(KernelJson.Members.class)
    public Map<String, Object> members(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        Caller caller = Caller.from(sc);
        workspaces.get(caller, spaceId);
        PrincipalRecord owner = MeResource.me(principals, caller);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("username", owner.username());
        m.put("name", owner.name());
        m.put("email", owner.email());
        m.put("picture", owner.picture());
        m.put("role", "owner");
        return Map.of("members", List.of(m));
    }

    @POST
    @Path("{spaceId}/members")
    public Map<String, Object> addMember(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        workspaces.get(Caller.from(sc), spaceId);
        throw ApiException.forbidden(SINGLE_OWNER);
    }

    @PATCH
    @Path("{spaceId}/members/{username}")
    public Map<String, Object> changeMember(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        return addMember(sc, spaceId);
    }

    @DELETE
    @Path("{spaceId}/members/{username}")
    public Map<String, Object> removeMember(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        return addMember(sc, spaceId);
    }

    @RequiresScope("account:read")
    @GET
    @Path("{spaceId}/common-env")
    @JsonShape(KernelJson.Variables.class)
    public Map<String, Object> commonEnv(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        WorkspaceRecord w = workspaces.get(Caller.from(sc), spaceId);
        return Map.of(
                "variables",
                env.list(w.id()).stream()
                        .map(CommonEnvironment.Variable::toJson)
                        .toList());
    }

    @PUT
    @Path("{spaceId}/common-env")
    @JsonShape(KernelJson.OneVariable.class)
    public Map<String, Object> putCommonEnv(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(KernelJson.VariableInput.class) JsonNode body) {
        WorkspaceRecord w = workspaces.get(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String name = b.requiredString("name");
        if (!ENV_NAME.matcher(name).matches()) {
            throw ApiException.badRequest("name must match ^[A-Z_][A-Z0-9_]*$ and be at most 128 characters");
        }
        String value = b.requiredString("value");
        if (value.length() > 65_536) {
            throw ApiException.badRequest("value must be at most 65536 characters");
        }
        boolean secret = b.bool("secret").orElse(false);
        return Map.of("variable", env.put(w.id(), name, value, secret).toJson());
    }

    @DELETE
    @Path("{spaceId}/common-env/{name}")
    @JsonShape(KernelJson.Success.class)
    public Map<String, Object> deleteCommonEnv(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("name") String name) {
        WorkspaceRecord w = workspaces.get(Caller.from(sc), spaceId);
        if (!env.delete(w.id(), name)) {
            throw ApiException.notFound("common environment variable not found");
        }
        return Map.of("success", true);
    }
}
