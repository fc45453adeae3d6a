package dev.atrium.people.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.Sql;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code GET /api/avatars/:id?size=256|64}: an uploaded avatar as PNG. An upload gets a new id, so what an id names
 * never changes: it is cached for a year ({@code immutable}) and revalidated by its ETag.
 */
@Component(service = AvatarResource.class)
@KernelResource
@Path("/api/avatars/{id}")
public class AvatarResource {

    static final String CACHE_CONTROL = "public, max-age=31536000, immutable";

    private final Sql sql;

    @Activate
    public AvatarResource(@Reference PeopleStore store) {
        this.sql = store.sql;
    }

    @GET
    @Anonymous
    @Produces("image/png")
    public Response get(
            @PathParam("id") String id,
            @QueryParam("size") String size,
            @HeaderParam(HttpHeaders.IF_NONE_MATCH) String ifNoneMatch) {
        String column;
        if (size == null || size.isEmpty() || size.equals(String.valueOf(AvatarImages.LARGE))) {
            column = "large";
        } else if (size.equals(String.valueOf(AvatarImages.SMALL))) {
            column = "small";
        } else {
            throw ApiException.badRequest("size must be " + AvatarImages.LARGE + " or " + AvatarImages.SMALL);
        }
        if (id.length() > 64) {
            throw ApiException.notFound("avatar not found");
        }
        byte[] image = sql.one("SELECT " + column + " FROM people_avatars WHERE id = ?", rs -> rs.getBytes(1), id)
                .orElseThrow(() -> ApiException.notFound("avatar not found"));
        String etag = "\"" + Digests.base64Url(Digests.sha256(image)).substring(0, 22) + "\"";
        if (ifNoneMatch != null && (ifNoneMatch.trim().equals("*") || ifNoneMatch.contains(etag))) {
            return Response.notModified()
                    .header(HttpHeaders.ETAG, etag)
                    .header(HttpHeaders.CACHE_CONTROL, CACHE_CONTROL)
                    .build();
        }
        return Response.ok(image, "image/png")
                .header(HttpHeaders.ETAG, etag)
                .header(HttpHeaders.CACHE_CONTROL, CACHE_CONTROL)
                .header("X-Content-Type-Options", "nosniff")
                .build();
    }
}
