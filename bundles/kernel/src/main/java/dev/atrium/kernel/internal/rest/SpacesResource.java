package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.BodyLimit;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.internal.archive.WorkspaceArchive;
import dev.atrium.kernel.internal.domain.CommonEnvironment;
import dev.atrium.kernel.internal.domain.Names;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import dev.atrium.kernel.internal.domain.WorkspaceRecord;
import dev.atrium.kernel.internal.domain.Workspaces;
import dev.atrium.kernel.internal.http.CapabilityDeclaration;
import dev.atrium.kernel.internal.http.Readiness;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
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
import javax.ws.rs.HeaderParam;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
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
    static final String ARCHIVE_TYPE = "application/zip";
    private static final String SINGLE_OWNER =
            "a workspace has exactly one owner: members cannot be added, changed or removed";

    private final Workspaces workspaces;
    private final Principals principals;
    private final CommonEnvironment env;
    private final Readiness readiness;
    private final WorkspaceArchive archive;

    @Activate
    public SpacesResource(
            @Reference Workspaces workspaces,
            @Reference Principals principals,
            @Reference CommonEnvironment env,
            @Reference Readiness readiness,
            @Reference WorkspaceArchive archive) {
        this.workspaces = workspaces;
        this.principals = principals;
        this.env = env;
        this.readiness = readiness;
        this.archive = archive;
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

    /**
     * The workspace's export: its settings as JSON (the default, as the spec's first answer), or with
     * {@code ?format=zip} (or {@code Accept: application/zip} alone) the workspace archive with what it holds, streamed.
     */
    @RequiresScope("*")
    @GET
    @Path("{spaceId}/export")
    @Produces({MediaType.APPLICATION_JSON, ARCHIVE_TYPE})
    @JsonShape(KernelJson.Export.class)
    @NotJson(ARCHIVE_TYPE)
    public Response export(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("format") String format,
            @HeaderParam(HttpHeaders.ACCEPT) String accept) {
        Caller caller = Caller.from(sc);
        WorkspaceRecord w = workspaces.get(caller, spaceId);
        if (archiveWanted(format, accept)) {
            SpaceRef space = workspaces.require(caller, w.id());
            StreamingOutput body = out -> archive.export(w, space, out);
            return Response.ok(body, ARCHIVE_TYPE)
                    .header("Content-Disposition", "attachment; filename=\"" + w.slug() + ".atrium.zip\"")
                    .build();
        }
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
        return Response.ok(m, MediaType.APPLICATION_JSON).build();
    }

    /** {@code ?format=zip}, or {@code json}/absent; without a format, an Accept naming the archive and not JSON. */
    static boolean archiveWanted(String format, String accept) {
        if (format != null && !format.isBlank()) {
            return switch (format.trim()) {
                case "zip" -> true;
                case "json" -> false;
                default -> throw ApiException.badRequest("format must be json or zip");
            };
        }
        return accept != null && accept.contains(ARCHIVE_TYPE) && !accept.contains(MediaType.APPLICATION_JSON);
    }

    /**
     * Makes a new workspace for the caller from a workspace archive (the body, {@code application/zip}), named as the
     * archived one unless {@code ?name=} says otherwise. Parts no bundle here reads are skipped and listed.
     */
    @RequiresScope("*")
    @POST
    @Path("import")
    @Consumes(MediaType.WILDCARD)
    @BodyLimit(WorkspaceArchive.MAX_ARCHIVE)
    @JsonShape(KernelJson.Imported.class)
    public Response importArchive(@Context SecurityContext sc, @QueryParam("name") String name, InputStream body)
            throws IOException {
        Caller caller = Caller.from(sc);
        String spaceName = name == null ? null : name.trim();
        if (spaceName != null && (spaceName.isEmpty() || spaceName.codePointCount(0, spaceName.length()) > 100)) {
            throw ApiException.badRequest("name must be 1 to 100 characters");
        }
        java.nio.file.Path file = WorkspaceArchive.spool(body);
        try {
            WorkspaceArchive.Imported imported = archive.restore(caller, file, spaceName);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("space", imported.space().toJson());
            m.put("parts", imported.parts());
            m.put("skipped", imported.skipped());
            return Response.status(201).entity(m).build();
        } finally {
            Files.deleteIfExists(file);
        }
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
