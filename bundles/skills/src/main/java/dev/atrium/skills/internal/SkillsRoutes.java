package dev.atrium.skills.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.skills.internal.SkillStore.Skill;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;

/**
 * The custom skill routes, served under {@code /api/spaces/:spaceId/skills} and (the spec's alias)
 * {@code /api/workspaces/:workspaceId/skills} by the two subclasses. Every route proves the workspace through the
 * kernel's {@link OwnerScope} first; a skill is then looked up inside that workspace only, so another Principal's
 * skill is the same 404 as a missing one.
 */
public abstract class SkillsRoutes {

    private static final String NOT_FOUND = "skill not found";

    private final OwnerScope ownerScope;
    private final SkillStore store;
    private final OfficialSkills catalog;

    SkillsRoutes(OwnerScope ownerScope, SkillStore store, OfficialSkills catalog) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.catalog = catalog;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(SkillJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = space(sc, spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "skills",
                store.list(space.id(), page.limit(), page.offset()).stream()
                        .map(Skill::toJson)
                        .toList(),
                store.count(space.id()));
    }

    @POST
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(SkillJson.Input.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        return Response.status(201)
                .entity(Map.of(
                        "skill",
                        store.create(space.id(), SkillInput.of(body, null, null, catalog))
                                .toJson()))
                .build();
    }

    @GET
    @Path("id/{skillId}")
    @RequiresScope("threads:read")
    @JsonShape(SkillJson.One.class)
    public Map<String, Object> getById(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("skillId") String skillId) {
        return Map.of("skill", byId(space(sc, spaceId), skillId).toJson());
    }

    /** Replaces the skill (a new name must be free: 409 otherwise); its enabled state stays unless the body sets it. */
    @PUT
    @Path("id/{skillId}")
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.One.class)
    public Map<String, Object> replaceById(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("skillId") String skillId,
            @JsonShape(SkillJson.Input.class) JsonNode body) {
        Skill current = byId(space(sc, spaceId), skillId);
        return Map.of(
                "skill",
                store.replace(current.id(), SkillInput.of(body, null, current, catalog))
                        .toJson());
    }

    @PATCH
    @Path("id/{skillId}")
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.One.class)
    public Map<String, Object> toggleById(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("skillId") String skillId,
            @JsonShape(SkillJson.Toggle.class) JsonNode body) {
        return toggle(byId(space(sc, spaceId), skillId), body);
    }

    @DELETE
    @Path("id/{skillId}")
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.Deleted.class)
    public Map<String, Object> deleteById(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("skillId") String skillId) {
        return delete(byId(space(sc, spaceId), skillId));
    }

    @GET
    @Path("{skillName}")
    @RequiresScope("threads:read")
    @JsonShape(SkillJson.One.class)
    public Map<String, Object> getByName(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("skillName") String name) {
        return Map.of("skill", byName(space(sc, spaceId), name).toJson());
    }

    /** Creates the skill of that name (201) or replaces it (200). */
    @PUT
    @Path("{skillName}")
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.One.class)
    public Response upsertByName(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("skillName") String name,
            @JsonShape(SkillJson.Input.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        Skill current = store.byName(space.id(), SkillInput.name(name)).orElse(null);
        Map.Entry<Skill, Boolean> done = store.upsertByName(space.id(), SkillInput.of(body, name, current, catalog));
        return Response.status(done.getValue() ? 201 : 200)
                .entity(Map.of("skill", done.getKey().toJson()))
                .build();
    }

    @PATCH
    @Path("{skillName}")
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.One.class)
    public Map<String, Object> toggleByName(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("skillName") String name,
            @JsonShape(SkillJson.Toggle.class) JsonNode body) {
        return toggle(byName(space(sc, spaceId), name), body);
    }

    @DELETE
    @Path("{skillName}")
    @RequiresScope("threads:write")
    @JsonShape(SkillJson.Deleted.class)
    public Map<String, Object> deleteByName(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("skillName") String name) {
        return delete(byName(space(sc, spaceId), name));
    }

    private SpaceRef space(SecurityContext sc, String spaceId) {
        return ownerScope.require(Caller.from(sc), spaceId);
    }

    private Skill byId(SpaceRef space, String id) {
        return store.byId(space.id(), id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    private Skill byName(SpaceRef space, String name) {
        return store.byName(space.id(), name).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    /** {@code {"enabled": true|false}} sets it; {@code {}} flips it. */
    private Map<String, Object> toggle(Skill skill, JsonNode body) {
        boolean enabled = !skill.enabled();
        JsonBody b = JsonBody.of(body);
        NulText.reject(body);
        body.fieldNames().forEachRemaining(f -> {
            if (!"enabled".equals(f)) {
                throw ApiException.badRequest("PATCH takes only enabled (replace a skill with PUT)");
            }
        });
        if (body.has("enabled") && body.get("enabled").isNull()) {
            throw ApiException.badRequest("enabled must be a boolean");
        }
        enabled = b.bool("enabled").orElse(enabled);
        return Map.of(
                "skill",
                store.setEnabled(skill.id(), enabled)
                        .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                        .toJson());
    }

    private Map<String, Object> delete(Skill skill) {
        if (!store.delete(skill.id())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("success", true);
        return m;
    }
}
