package dev.atrium.skills.internal;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
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

/** {@code /api/spaces/:spaceId/skills-context}: what a run's system prompt gets of the workspace's skills. */
@Component(service = SkillsContextResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/skills-context")
@Produces(MediaType.APPLICATION_JSON)
public class SkillsContextResource {

    private final OwnerScope ownerScope;
    private final SkillsContext context;

    @Activate
    public SkillsContextResource(@Reference OwnerScope ownerScope, @Reference SkillsContext context) {
        this.ownerScope = ownerScope;
        this.context = context;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(SkillJson.Context.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return context.of(space.id()).toJson();
    }
}
