package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
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
 * {@code GET /admin/oauth/keys} (operator): the ID token signing keys, never their material. {@code POST /admin/oauth/keys/rotate} (operator), body optional {@code {"immediate": true}}: the next ID token signing
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

    /**
     * The keys, newest first: {@code state} {@code current} (the newest, which signs from {@code signs_from}),
     * {@code retired} (still published until {@code published_until}) or {@code expired} (no longer published);
     * {@code signing} marks the one that signs ID tokens now.
     */
    @GET
    @Path("keys")
    @JsonShape(OAuthJson.SigningKeyList.class)
    public Map<String, Object> list() {
        Instant now = Instant.now();
        List<SigningKeys.Listed> listed = keys.listed();
        String signing = listed.stream()
                .filter(k -> k.retireAfter() == null || k.retireAfter().isAfter(now))
                .filter(k -> !k.signsFrom().isAfter(now))
                .max(Comparator.comparing(SigningKeys.Listed::signsFrom))
                .map(SigningKeys.Listed::kid)
                .orElse(null);
        List<Map<String, Object>> out = new ArrayList<>();
        for (SigningKeys.Listed k : listed) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kid", k.kid());
            m.put("algorithm", k.algorithm());
            m.put("created_at", k.createdAt().toString());
            m.put("signs_from", k.signsFrom().toString());
            m.put("state", k.retireAfter() == null ? "current" : k.retireAfter().isAfter(now) ? "retired" : "expired");
            m.put(
                    "published_until",
                    k.retireAfter() == null ? null : k.retireAfter().toString());
            m.put("signing", k.kid().equals(signing));
            out.add(m);
        }
        return Map.of("keys", out);
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
