package dev.atrium.skills.internal;

import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import javax.ws.rs.Consumes;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/spaces/:spaceId/skills}: the custom skill routes of {@link SkillsRoutes}. */
@Component(service = SpaceSkillsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/skills")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceSkillsResource extends SkillsRoutes {

    @Activate
    public SpaceSkillsResource(
            @Reference OwnerScope ownerScope, @Reference SkillStore store, @Reference OfficialSkills catalog) {
        super(ownerScope, store, catalog);
    }
}
