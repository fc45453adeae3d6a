package dev.atrium.apps.internal;

import dev.atrium.apps.internal.manifest.ManifestParser;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.KernelResource;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Component;

/** The app manifest's JSON Schema at a stable public URL, for editors and CI to validate {@code app.yml} against. */
@Component(service = ManifestSchemaResource.class)
@KernelResource
@Path("/schemas/app-manifest")
public class ManifestSchemaResource {

    @GET
    @Path("v1alpha1.json")
    @Produces("application/schema+json")
    @Anonymous
    public Response schema() {
        return Response.ok(ManifestParser.schema())
                .header("Cache-Control", "public, max-age=3600")
                .build();
    }
}
