package dev.atrium.resource.secret.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.io.IOException;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The operator's secret keys: {@code GET /admin/resources/secret-keys} lists them (id, whether current, how many values
 * each still encrypts; never key material), {@code POST /admin/resources/secret-keys/rotate} makes a new current one.
 */
@Component(service = SecretKeysAdmin.class)
@KernelResource
@Path("/admin/resources/secret-keys")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class SecretKeysAdmin {

    private final SecretRefs secrets;

    @Activate
    public SecretKeysAdmin(@Reference SecretRefs secrets) {
        this.secrets = secrets;
    }

    @GET
    @JsonShape(SecretJson.Keys.class)
    public Map<String, Object> list() {
        try {
            return Map.of("keys", secrets.keyUsage());
        } catch (IOException e) {
            throw ApiException.unavailable("the secret keys cannot be read: " + e.getMessage());
        }
    }

    @POST
    @Path("rotate")
    @JsonShape(SecretJson.Rotated.class)
    public Map<String, Object> rotate() {
        try {
            return Map.of("key_id", secrets.rotate());
        } catch (IOException e) {
            throw ApiException.unavailable("no new secret key could be made: " + e.getMessage());
        }
    }
}
