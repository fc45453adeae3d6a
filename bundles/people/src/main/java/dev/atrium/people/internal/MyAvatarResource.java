package dev.atrium.people.internal;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.Sql;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code PUT /api/me/avatar}: the caller's avatar, uploaded as the request body (a PNG, JPEG, GIF or WebP image, told
 * by its bytes). It is stored as 256 and 64 pixel squares under a new id, and the Principal's picture (what
 * {@code /api/me} and profiles show) becomes its URL.
 */
@Component(service = MyAvatarResource.class)
@KernelResource
@Path("/api/me/avatar")
@Produces(MediaType.APPLICATION_JSON)
public class MyAvatarResource {

    private final Sql sql;
    private final PrincipalDirectory principals;
    private final PublicUrls urls;

    @Activate
    public MyAvatarResource(
            @Reference PeopleStore store, @Reference PrincipalDirectory principals, @Reference PublicUrls urls) {
        this.sql = store.sql;
        this.principals = principals;
        this.urls = urls;
    }

    @PUT
    @Consumes("*/*")
    @JsonShape(PeopleJson.Avatar.class)
    public Map<String, Object> upload(@Context SecurityContext sc, @Context UriInfo uri, byte[] body) {
        String me = Caller.from(sc).principalId();
        AvatarImages.Sized sized = AvatarImages.sized(body == null ? new byte[0] : body);
        String id = Ids.id("av");
        sql.update(
                "INSERT INTO people_avatars (id, principal_id, sha256, large, small) VALUES (?, ?, ?, ?, ?) "
                        + "ON CONFLICT (principal_id) DO UPDATE SET id = excluded.id, sha256 = excluded.sha256, "
                        + "large = excluded.large, small = excluded.small, created_at = now()",
                id,
                me,
                Digests.base64Url(Digests.sha256(body)),
                sized.large(),
                sized.small());
        String url = urls.base(uri.getBaseUri()) + "/api/avatars/" + id;
        principals.updateProfile(me, null, url);
        return Map.of("avatar_url", url, "sizes", List.of(AvatarImages.LARGE, AvatarImages.SMALL));
    }
}
