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

/** {@code /api/workspaces/:workspaceId/skills}, the spec's alias: the custom skill routes of {@link SkillsRoutes}. */
@Component(service = WorkspaceSkillsResource.class)
@KernelResource
@Path("/api/workspaces/{spaceId}/skills")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class WorkspaceSkillsResource extends SkillsRoutes {

    @Activate
    public WorkspaceSkillsResource(
            @Reference OwnerScope ownerScope, @Reference SkillStore store, @Reference OfficialSkills catalog) {
        super(ownerScope, store, catalog);
    }
}
