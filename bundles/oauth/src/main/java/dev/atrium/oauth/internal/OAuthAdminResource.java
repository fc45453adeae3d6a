package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.util.Map;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code POST /admin/oauth/keys/rotate} (operator), body optional {@code {"immediate": true}}: the next ID token signing
 * key, published now and signing after the JWKS cache lifetime (or at once); the old one stays published.
 */
@Component(service = OAuthAdminResource.class)
@KernelResource
@Path("/admin/oauth")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class OAuthAdminResource {

    private final SigningKeys keys;

    @Activate
    public OAuthAdminResource(@Reference SigningKeys keys) {
        this.keys = keys;
    }

    @POST
    @Path("keys/rotate")
    @JsonShape(OAuthJson.Rotation.class)
    public Map<String, Object> rotate(
            @JsonShape(OAuthJson.RotateInput.class) com.fasterxml.jackson.databind.JsonNode body) {
        boolean immediate = body != null && body.path("immediate").asBoolean(false);
        SigningKeys.Rotation r = keys.rotate(immediate);
        return Map.of(
                "kid",
                r.kid(),
                "signs_from",
                r.signsFrom().toString(),
                "replaced",
                r.replaced(),
                "replaced_published_until",
                r.replacedRetireAfter().toString());
    }
}
