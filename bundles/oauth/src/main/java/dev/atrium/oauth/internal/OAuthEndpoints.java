package dev.atrium.oauth.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtensionSelect;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsResource;

import dev.atrium.kernel.api.KernelExtensions;
import dev.atrium.kernel.api.SelfAuthenticated;

import com.fasterxml.jackson.databind.JsonNode;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.PrincipalDirectory;

/**
 * The OAuth 2.0 endpoints under {@code /oauth}: authorize (with the consent page), token, device authorization and
 * verification, introspection, revocation, UserInfo and dynamic client registration. They answer in OAuth's own
 * error format, not the API's, so they do not select the kernel's gate (which would refuse HTTP Basic).
 */
@Component(service = OAuthEndpoints.class)
@JaxrsResource
@JaxrsExtensionSelect({ KernelExtensions.SELECT, KernelExtensions.JSON })
@SelfAuthenticated
@Path("/oauth")
public class OAuthEndpoints {

    /** The largest registration body: metadata of at most 20 redirect URIs and a few short fields fits many times. */
    static final int MAX_REGISTRATION_BODY = 64 * 1024;

    private final OAuthServer server;
    private final Signin signin;
    private final RegistrationLimiter limiter;

    @Activate
    public OAuthEndpoints(@Reference OAuthServer server, @Reference Signin signin, @Reference RegistrationLimiter limiter) {
        this.server = server;
        this.signin = signin;
        this.limiter = limiter;
    }

    // ---------------------------------------------------------------- authorize

    @GET
    @Path("authorize")
    public Response authorize(@Context UriInfo uri, @Context HttpHeaders headers) {
        Authorizations.AuthorizeRequest request;
        try {
            request = server.checkAuthorize(Requests.query(uri));
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        } catch (Authorizations.RedirectError e) {
            return Response.status(302).header("Location", e.location()).header("Cache-Control", "no-store").build();
        }
        Map<String, String> query = Requests.query(uri);
        Set<String> prompt = prompt(query.get("prompt"));
        if (prompt.contains("none") && prompt.size() > 1) {
            return redirect(request, "invalid_request", "prompt=none cannot be combined with other prompt values");
        }
        Caller user = signin.user(headers);
        if (user == null) {
            if (prompt.contains("none")) {
                return redirect(request, "login_required", "the user is not signed in");
            }
            String back = uri.getRequestUri().getRawPath() + (uri.getRequestUri().getRawQuery() == null ? "" : "?" + uri.getRequestUri().getRawQuery());
            return Response.status(302).header("Location", OAuthServer.withQuery("/auth/login", "return_to", back))
                    .header("Cache-Control", "no-store").build();
        }
        // a stored consent that covers the scopes is not asked again (OIDC Core 3.1.2.4), unless the client asks for it
        if (!prompt.contains("consent") && server.consentCovers(user.principalId(), request.client().clientId(), request.scopes())) {
            return Response.status(302).header("Location", server.approve(user.principalId(), request)).header("Cache-Control", "no-store").build();
        }
        if (prompt.contains("none")) {
            return redirect(request, "consent_required", "the user has not consented to these scopes for this client");
        }
        return Requests.html(200, consentPage(request, query, user));
    }

    /** The prompt values of OpenID Connect Core 3.1.2.1; login and select_account are accepted and act as without them. */
    private static Set<String> prompt(String value) {
        Set<String> out = new java.util.LinkedHashSet<>();
        if (value != null) {
            for (String v : value.trim().split("\\s+")) {
                if (!v.isEmpty()) {
                    out.add(v);
                }
            }
        }
        return out;
    }

    /** An error for the client at its (verified) redirect URI, with its state. */
    private static Response redirect(Authorizations.AuthorizeRequest r, String error, String description) {
        return Response.status(302).header("Location", OAuthServer.withQuery(r.redirectUri(), "error", error, "error_description", description,
                "state", r.state())).header("Cache-Control", "no-store").build();
    }

    private String consentPage(Authorizations.AuthorizeRequest r, Map<String, String> params, Caller user) {
        StringBuilder scopes = new StringBuilder("<ul id=\"scopes\">");
        for (String s : r.scopes()) {
            scopes.append("<li data-scope=\"").append(Html.esc(s)).append("\"><code>").append(Html.esc(s)).append("</code> ")
                    .append(Html.esc(ScopeSet.KNOWN.get(s))).append("</li>");
        }
        scopes.append("</ul>");
        Map<String, String> p = new LinkedHashMap<>(params);
        String json;
        try {
            json = Requests.JSON.writeValueAsString(p).replace("<", "\\u003c");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        String who = server.principals().get(user.principalId()).map(PrincipalDirectory.Entry::username).orElse(user.principalId());
        return Html.page("Authorize " + r.client().name(), "<h1>Authorize <span id=\"client\">" + Html.esc(r.client().name())
                + "</span></h1><p>Signed in as <b>" + Html.esc(who) + "</b>. <b>" + Html.esc(r.client().name())
                + "</b> asks to:</p>" + scopes + "<p>You will be sent back to <code>" + Html.esc(r.redirectUri()) + "</code>.</p>"
                + "<button id=\"approve\" onclick=\"decide(true)\">Approve</button><button id=\"deny\" onclick=\"decide(false)\">Deny</button>"
                + "<p id=\"status\" class=\"err\"></p>" + Html.SCRIPT + "<script>var params=" + json + ";async function decide(ok){"
                + "var b=Object.assign({},params,{approve:ok});var j=await post('/api/oauth/authorize/decision',b);"
                + "if(j&&j.redirect_to&&!/^(javascript|data|vbscript|file|blob):/i.test(j.redirect_to.trim())){window.location.href=j.redirect_to}}</script>");
    }

    // ---------------------------------------------------------------- device verification page

    @GET
    @Path("device")
    public Response devicePage(@Context UriInfo uri, @Context HttpHeaders headers) {
        Caller user = signin.user(headers);
        if (user == null) {
            String back = uri.getRequestUri().getRawPath() + (uri.getRequestUri().getRawQuery() == null ? "" : "?" + uri.getRequestUri().getRawQuery());
            return Response.status(302).header("Location", OAuthServer.withQuery("/auth/login", "return_to", back)).build();
        }
        String code = uri.getQueryParameters().getFirst("user_code");
        return Requests.html(200, Html.page("Connect a device", "<h1>Connect a device</h1><p>Enter the code your device shows.</p>"
                + "<input id=\"code\" value=\"" + Html.esc(code) + "\" autocomplete=\"off\"> <button id=\"check\" onclick=\"check()\">Continue</button>"
                + "<div id=\"ask\" hidden><p><b id=\"client\"></b> asks to:</p><ul id=\"scopes\"></ul>"
                + "<button id=\"approve\" onclick=\"decide(true)\">Approve</button><button id=\"deny\" onclick=\"decide(false)\">Deny</button></div>"
                + "<p id=\"status\" class=\"err\"></p>" + Html.SCRIPT
                + "<script>async function check(){var c=document.getElementById('code').value;var r=await fetch('/api/oauth/device/context?user_code='"
                + "+encodeURIComponent(c),{credentials:'same-origin'});var j=await r.json();if(!r.ok){document.getElementById('status').textContent="
                + "j.error.message;return}document.getElementById('client').textContent=j.client.client_name;var ul=document.getElementById('scopes');"
                + "ul.innerHTML='';j.scopes.forEach(function(s){var li=document.createElement('li');li.textContent=s.name+' - '+s.description;ul.appendChild(li)});"
                + "document.getElementById('ask').hidden=false}async function decide(ok){var j=await post('/api/oauth/device/decision',"
                + "{user_code:document.getElementById('code').value,approve:ok});if(j){document.getElementById('ask').hidden=true;"
                + "document.getElementById('status').textContent=ok?'Approved: you can return to your device.':'Denied.'}}</script>"));
    }

    // ---------------------------------------------------------------- token, device authorization, introspection, revocation

    // POST /oauth/token, /oauth/introspect and /oauth/revoke are served by TokenServlet, outside JAX-RS.

    @POST
    @Path("device_authorization")
    public Response deviceAuthorization(@Context UriInfo uri, @Context HttpHeaders headers, String body) {
        try {
            Map<String, String> p = Requests.body(headers, body);
            return Requests.json(200, server.deviceAuthorization(server.issuer(uri.getBaseUri()), authenticate(headers, p), p));
        } catch (OAuthError e) {
            return Requests.error(e);
        }
    }

    private Client authenticate(HttpHeaders headers, Map<String, String> p) {
        Client client = server.authenticate(headers.getHeaderString(HttpHeaders.AUTHORIZATION), p.remove("client_id"),
                p.remove("client_secret"));
        return client;
    }

    // ---------------------------------------------------------------- UserInfo

    @GET
    @Path("userinfo")
    public Response userinfo(@Context HttpHeaders headers) {
        return userinfoOf(headers);
    }

    @POST
    @Path("userinfo")
    public Response userinfoPost(@Context HttpHeaders headers) {
        return userinfoOf(headers);
    }

    private Response userinfoOf(HttpHeaders headers) {
        String authorization = headers.getHeaderString(HttpHeaders.AUTHORIZATION);
        String token = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7) ? authorization.substring(7).trim() : null;
        if (token == null || token.isEmpty()) {
            return Requests.bearerError(new OAuthError("invalid_request", "UserInfo needs an access token: send Authorization: Bearer <token>",
                    401), null, false);
        }
        IssuedTokens.Bearer bearer = server.bearer(token).orElse(null);
        if (bearer == null || bearer.principalId() == null || !server.principalActive(bearer.principalId())) {
            return Requests.bearerError(OAuthError.invalidToken("the access token is invalid, expired or revoked"), null, true);
        }
        if (!bearer.scopes().contains("openid")) {
            return Requests.bearerError(new OAuthError("insufficient_scope", "UserInfo needs the openid scope", 403), "openid", true);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sub", bearer.principalId());
        m.putAll(server.profileClaims(bearer.principalId(), bearer.scopes()));
        return Requests.json(200, m);
    }

    // ---------------------------------------------------------------- dynamic client registration (RFC 7591, 7592)

    @POST
    @Path("register")
    public Response register(@Context UriInfo uri, @Context javax.servlet.http.HttpServletRequest request, String body) {
        RegistrationLimiter.Refusal refused = limiter.attempt(request.getRemoteAddr());
        if (refused != null) {
            return Response.fromResponse(Requests.error(new OAuthError("temporarily_unavailable", refused.reason()
                    + "; try again in " + refused.retryAfterSeconds() + " s", 429)))
                    .header("Retry-After", Long.toString(refused.retryAfterSeconds())).build();
        }
        if (body != null && body.length() > MAX_REGISTRATION_BODY) {
            return registrationError("invalid_client_metadata", "the client metadata is larger than " + MAX_REGISTRATION_BODY + " bytes");
        }
        JsonNode node;
        try {
            node = body == null || body.isBlank() ? null : Requests.JSON.readTree(body);
        } catch (java.io.IOException e) {
            node = null;
        }
        if (node == null || !node.isObject()) {
            return registrationError("invalid_client_metadata", "the body must be a JSON object of client metadata");
        }
        try {
            java.util.function.Function<String, RuntimeException> invalid = msg -> new OAuthError(
                    msg.startsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata", msg, 400);
            OAuthClients.ClientSpec spec = spec(node, invalid, true);
            OAuthClients.checkSpec(spec, invalid);
            return Requests.json(201, server.register(null, spec, true).toJson(server.issuer(uri.getBaseUri())));
        } catch (OAuthError e) {
            return registrationError(e.error, e.getMessage());
        }
    }

    private static Response registrationError(String error, String description) {
        return Requests.error(new OAuthError(error, description, 400));
    }

    @GET
    @Path("register/{clientId}")
    public Response registration(@Context HttpHeaders headers, @PathParam("clientId") String clientId) {
        String authorization = headers.getHeaderString(HttpHeaders.AUTHORIZATION);
        String token = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7) ? authorization.substring(7).trim() : null;
        return server.clientByRegistrationToken(clientId, token).map(c -> Requests.json(200, c.toJson()))
                .orElseGet(() -> Requests.error(OAuthError.invalidToken("the registration access token is invalid")));
    }

    /** Client metadata from JSON: RFC 7591 names ({@code redirect_uris}, {@code scope}) or the API's. */
    static OAuthClients.ClientSpec spec(JsonNode node, java.util.function.Function<String, RuntimeException> invalid, boolean dynamic) {
        List<String> uris = new ArrayList<>();
        JsonNode r = node.get("redirect_uris");
        if (r != null && !r.isNull()) {
            if (!r.isArray()) {
                throw invalid.apply("redirect_uris must be an array of URIs");
            }
            if (r.size() > OAuthClients.MAX_REDIRECT_URIS) {
                throw invalid.apply("redirect_uris may hold at most " + OAuthClients.MAX_REDIRECT_URIS + " URIs");
            }
            for (JsonNode u : r) {
                if (!u.isTextual()) {
                    throw invalid.apply("redirect_uris must be an array of URIs");
                }
                uris.add(u.asText());
            }
        }
        String authMethod = text(node, "token_endpoint_auth_method", invalid);
        if (authMethod == null) {
            authMethod = "client_secret_basic";
        }
        Set<String> grants = new LinkedHashSet<>();
        JsonNode g = node.get("grant_types");
        if (g != null && !g.isNull()) {
            if (!g.isArray() || g.size() > 10) {
                throw invalid.apply("grant_types must be an array of at most 10 grant types");
            }
            g.forEach(x -> grants.add(x.asText()));
        } else {
            grants.add("authorization_code");
            grants.add("refresh_token");
            if (!dynamic && !"none".equals(authMethod)) {
                grants.add("client_credentials");
            }
            grants.add(OAuthServer.DEVICE_GRANT);
        }
        Set<String> scopes;
        JsonNode s = node.has("scope") ? node.get("scope") : node.get("scopes");
        if (s == null || s.isNull()) {
            scopes = new LinkedHashSet<>(ScopeSet.KNOWN.keySet());
        } else {
            String value;
            if (s.isArray()) {
                StringBuilder sb = new StringBuilder();
                s.forEach(x -> sb.append(' ').append(x.asText()));
                value = sb.toString();
            } else {
                value = s.asText();
            }
            if (value.length() > 1000) {
                throw invalid.apply("scope must be at most 1000 characters");
            }
            scopes = ScopeSet.parse(value);
            if (scopes == null) {
                throw invalid.apply("unknown scope in '" + value.trim() + "'");
            }
        }
        String name = text(node, "client_name", invalid);
        if (name == null && dynamic) {
            name = "Unnamed client";
        }
        return new OAuthClients.ClientSpec(name, uris, grants, scopes, authMethod, text(node, "client_uri", invalid),
                text(node, "logo_uri", invalid));
    }

    private static String text(JsonNode node, String field, java.util.function.Function<String, RuntimeException> invalid) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw invalid.apply(field + " must be a string");
        }
        return v.asText();
    }
}
