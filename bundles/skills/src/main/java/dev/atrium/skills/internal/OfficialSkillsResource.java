package dev.atrium.skills.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/spaces/:spaceId/official-skills[/:skillId]}: the catalog shipped in this bundle, behind the owner scope. */
@Component(service = OfficialSkillsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/official-skills")
@Produces(MediaType.APPLICATION_JSON)
public class OfficialSkillsResource {

    private final OwnerScope ownerScope;
    private final OfficialSkills catalog;

    @Activate
    public OfficialSkillsResource(@Reference OwnerScope ownerScope, @Reference OfficialSkills catalog) {
        this.ownerScope = ownerScope;
        this.catalog = catalog;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(SkillJson.Officials.class)
    public Map<String, Object> list(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        ownerScope.require(Caller.from(sc), spaceId);
        List<Map<String, Object>> skills =
                catalog.all().stream().map(SkillDocument::toJson).toList();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("skills", skills);
        m.put("total", skills.size());
        return m;
    }

    @GET
    @Path("{skillId}")
    @RequiresScope("threads:read")
    @JsonShape(SkillJson.OneOfficial.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("skillId") String skillId) {
        ownerScope.require(Caller.from(sc), spaceId);
        return Map.of(
                "skill",
                catalog.get(skillId)
                        .orElseThrow(() -> ApiException.notFound("official skill not found"))
                        .toJson());
    }
}
