package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.SelfAuthenticated;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.OPTIONS;
import javax.ws.rs.Path;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** RFC 8414 and OpenID Connect discovery, and the JWKS that verifies ID tokens. */
@Component(service = WellKnownResource.class)
@KernelResource
@SelfAuthenticated
@Path("/.well-known")
public class WellKnownResource {

    private final SigningKeys keys;
    private final OAuthServer server;

    @Activate
    public WellKnownResource(@Reference SigningKeys keys, @Reference OAuthServer server) {
        this.keys = keys;
        this.server = server;
    }

    @GET
    @Path("oauth-authorization-server")
    @JsonShape(OAuthJson.ServerMetadata.class)
    public Response authorizationServer(@Context UriInfo uri) {
        return metadata(server.issuer(uri.getBaseUri()), false);
    }

    @GET
    @Path("openid-configuration")
    @JsonShape(OAuthJson.ServerMetadata.class)
    public Response openid(@Context UriInfo uri) {
        return metadata(server.issuer(uri.getBaseUri()), true);
    }

    @GET
    @Path("jwks.json")
    @JsonShape(OAuthJson.Jwks.class)
    public Response jwks() {
        return Response.ok(keys.jwks(), MediaType.APPLICATION_JSON_TYPE)
                .header("Cache-Control", "public, max-age=" + SigningKeys.JWKS_MAX_AGE.toSeconds())
                .header("Access-Control-Allow-Origin", "*")
                .build();
    }

    /** CORS preflights: the metadata and the keys are public, for any origin (no credentials). */
    @OPTIONS
    @Path("oauth-authorization-server")
    public Response authorizationServerPreflight() {
        return preflight();
    }

    @OPTIONS
    @Path("openid-configuration")
    public Response openidPreflight() {
        return preflight();
    }

    @OPTIONS
    @Path("jwks.json")
    public Response jwksPreflight() {
        return preflight();
    }

    private static Response preflight() {
        return Response.noContent()
                .header("Access-Control-Allow-Origin", "*")
                .header("Access-Control-Allow-Methods", "GET")
                .header("Access-Control-Max-Age", "600")
                .build();
    }

    static Map<String, Object> metadata(String issuer) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("issuer", issuer);
        m.put("authorization_endpoint", issuer + "/oauth/authorize");
        m.put("token_endpoint", issuer + "/oauth/token");
        m.put("device_authorization_endpoint", issuer + "/oauth/device_authorization");
        m.put("introspection_endpoint", issuer + "/oauth/introspect");
        m.put("revocation_endpoint", issuer + "/oauth/revoke");
        m.put("registration_endpoint", issuer + "/oauth/register");
        m.put("userinfo_endpoint", issuer + "/oauth/userinfo");
        m.put("end_session_endpoint", issuer + "/oauth/end_session");
        m.put("jwks_uri", issuer + "/.well-known/jwks.json");
        m.put("scopes_supported", new ArrayList<>(ScopeSet.KNOWN.keySet()));
        m.put("response_types_supported", List.of("code"));
        m.put("response_modes_supported", List.of("query"));
        m.put(
                "grant_types_supported",
                List.of("authorization_code", "refresh_token", "client_credentials", OAuthServer.DEVICE_GRANT));
        m.put("token_endpoint_auth_methods_supported", List.of("client_secret_basic", "client_secret_post", "none"));
        // introspection shows what a token grants: only to an authenticated (confidential) client
        m.put("introspection_endpoint_auth_methods_supported", List.of("client_secret_basic", "client_secret_post"));
        m.put(
                "revocation_endpoint_auth_methods_supported",
                List.of("client_secret_basic", "client_secret_post", "none"));
        m.put("code_challenge_methods_supported", List.of("S256"));
        return m;
    }

    private Response metadata(String issuer, boolean openid) {
        Map<String, Object> m = metadata(issuer);
        if (openid) {
            m.put("subject_types_supported", List.of("public"));
            m.put("id_token_signing_alg_values_supported", List.of(SigningKeys.ALGORITHM));
            m.put(
                    "claims_supported",
                    List.of(
                            "iss",
                            "sub",
                            "aud",
                            "exp",
                            "iat",
                            "auth_time",
                            "amr",
                            "nonce",
                            "at_hash",
                            "azp",
                            "name",
                            "preferred_username",
                            "picture",
                            "email"));
            m.put("prompt_values_supported", List.of("none", "login", "consent", "select_account"));
            m.put("claims_parameter_supported", false);
            m.put("request_parameter_supported", false);
            m.put("request_uri_parameter_supported", false);
            m.put("frontchannel_logout_supported", false);
            m.put("backchannel_logout_supported", false);
        }
        return Response.ok(m, MediaType.APPLICATION_JSON_TYPE)
                .header("Access-Control-Allow-Origin", "*")
                .build();
    }
}
