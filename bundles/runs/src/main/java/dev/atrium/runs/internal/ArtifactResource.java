package dev.atrium.runs.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.runs.internal.RunStore.Artifact;
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

/** {@code /api/artifacts/:id}: an artifact, through its run's workspace (a stranger's is a 404 like a missing one). */
@Component(service = ArtifactResource.class)
@KernelResource
@Path("/api/artifacts/{id}")
@Produces(MediaType.APPLICATION_JSON)
public class ArtifactResource {

    private final RunAccess access;
    private final RunStore store;

    @Activate
    public ArtifactResource(@Reference RunAccess access, @Reference RunStore store) {
        this.access = access;
        this.store = store;
    }

    @GET
    @RequiresScope("runs:read")
    @JsonShape(RunJson.OneArtifact.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        Artifact a = store.artifact(id).orElseThrow(() -> ApiException.notFound("artifact not found"));
        try {
            access.owned(Caller.from(sc), a.runId());
        } catch (ApiException e) {
            throw ApiException.notFound("artifact not found");
        }
        return Map.of("artifact", a.toJson(true));
    }
}
