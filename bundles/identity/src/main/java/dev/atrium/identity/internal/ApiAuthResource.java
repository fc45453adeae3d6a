package dev.atrium.identity.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SessionVerifier;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.CookieParam;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code POST /api/auth/logout}, {@code POST /api/auth/setup-username}, {@code PATCH /api/auth/profile}, {@code GET /api/auth/links}. */
@Component(service = ApiAuthResource.class)
@KernelResource
@Path("/api/auth")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ApiAuthResource {

    private final IdentityService identity;

    @Activate
    public ApiAuthResource(@Reference IdentityService identity) {
        this.identity = identity;
    }

    @POST
    @Path("logout")
    @JsonShape(IdentityJson.LoggedOut.class)
    public Response logout(@Context SecurityContext sc, @CookieParam(SessionVerifier.COOKIE) String cookie) {
        Caller.from(sc);
        boolean ended = identity.endSession(cookie);
        return Response.ok(Map.of("success", true, "session_ended", ended))
                .header("Set-Cookie", SessionVerifier.COOKIE + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax")
                .header("Set-Cookie", SessionVerifier.CSRF_COOKIE + "=; Path=/; Max-Age=0; SameSite=Lax")
                .build();
    }

    @POST
    @Path("setup-username")
    @JsonShape(IdentityJson.Me.class)
    public Map<String, Object> setupUsername(
            @Context SecurityContext sc, @JsonShape(IdentityJson.UsernameInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        String username = JsonBody.of(body).requiredString("username").trim();
        return me(identity.principals().setUsername(caller.principalId(), username));
    }

    @PATCH
    @Path("profile")
    @JsonShape(IdentityJson.Me.class)
    public Map<String, Object> profile(
            @Context SecurityContext sc, @JsonShape(IdentityJson.ProfileInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String name = b.optionalText("name", 1, 100).orElse(null);
        String picture = b.optionalText("picture", 1, 2000)
                .orElse(b.optionalText("avatar_url", 1, 2000).orElse(null));
        if (picture != null && !picture.matches("https?://\\S+")) {
            throw ApiException.badRequest("picture must be an http(s) URL");
        }
        if (name == null && picture == null) {
            throw ApiException.badRequest("send name or picture");
        }
        return me(identity.principals().updateProfile(caller.principalId(), name, picture));
    }

    @RequiresScope("account:read")
    @GET
    @Path("links")
    @JsonShape(IdentityJson.Links.class)
    public Map<String, Object> links(@Context SecurityContext sc) {
        return Map.of("links", identity.links(Caller.from(sc).principalId()));
    }

    static Map<String, Object> me(PrincipalDirectory.Entry p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("email", p.email());
        m.put("name", p.name());
        m.put("username", p.username());
        m.put("picture", p.picture());
        m.put("setup_completed", p.setupCompleted());
        return m;
    }
}
