package dev.atrium.people.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.PublicProfiles.Profile;
import java.net.URI;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code GET /api/users/:username}: a public profile; {@code PATCH} changes one's own (display name, bio, website). The
 * class has no sub-resource methods: {@code /api/users/:username/:repoName} and the rest belong to other resources.
 */
@Component(service = UserResource.class)
@KernelResource
@Path("/api/users/{username}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class UserResource {

    static final int BIO_MAX = 500;
    static final int WEBSITE_MAX = 255;

    private final People people;
    private final PrincipalDirectory principals;

    @Activate
    public UserResource(@Reference People people, @Reference PrincipalDirectory principals) {
        this.people = people;
        this.principals = principals;
    }

    @GET
    @Anonymous
    @JsonShape(PeopleJson.User.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("username") String username) {
        return Map.of("user", people.profile(people.user(username), People.viewer(sc)));
    }

    @PATCH
    @JsonShape(PeopleJson.User.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @JsonShape(PeopleJson.ProfileInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Profile p = people.user(username);
        if (!p.principalId().equals(caller.principalId())) {
            throw ApiException.forbidden("you can change only your own profile");
        }
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        String name = b.optionalText("display_name", 1, 100).map(String::trim).orElse(null);
        String bio = b.has("bio") ? b.string("bio").orElse("").trim() : null;
        if (bio != null && bio.length() > BIO_MAX) {
            throw ApiException.badRequest("bio must be at most " + BIO_MAX + " characters");
        }
        String website = b.has("website") ? b.string("website").orElse("").trim() : null;
        if (website != null && !website.isEmpty()) {
            website = website(website);
        }
        if (name == null && bio == null && website == null) {
            throw ApiException.badRequest("send display_name, bio or website");
        }
        if (name != null) {
            principals.updateProfile(p.principalId(), name, null);
        }
        if (bio != null || website != null) {
            people.store.saveExtra(p.principalId(), bio, website);
        }
        return Map.of("user", people.profile(people.user(username), caller.principalId()));
    }

    /** An absolute http(s) URL with a host, at most {@value #WEBSITE_MAX} characters. */
    static String website(String value) {
        if (value.length() > WEBSITE_MAX) {
            throw ApiException.badRequest("website must be at most " + WEBSITE_MAX + " characters");
        }
        try {
            URI uri = new URI(value);
            if (("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                    && uri.getHost() != null) {
                return value;
            }
        } catch (java.net.URISyntaxException e) {
            // answered below
        }
        throw ApiException.badRequest("website must be an http(s) URL");
    }
}
