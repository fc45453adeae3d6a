package dev.atrium.oauth.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.SelfAuthenticated;
import dev.atrium.kernel.api.SessionVerifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.GET;
import javax.ws.rs.OPTIONS;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The OAuth 2.0 endpoints under {@code /oauth}: authorize (with the consent page), token, device authorization and
 * verification, introspection, revocation, UserInfo and dynamic client registration. They answer in OAuth's own
 * error format, not the API's, so they do not select the kernel's gate (which would refuse HTTP Basic).
 *
 * <p>Why one class of about 650 lines: it is the JAX-RS face of {@code /oauth}, one method per endpoint, each a few
 * lines over {@code Authorizations}, {@code OAuthClients} and {@code Tokens}, where the protocol's logic is.
 */
@Component(service = OAuthEndpoints.class)
@KernelResource
@SelfAuthenticated
@Path("/oauth")
public class OAuthEndpoints {

    /** The largest registration body: metadata of at most 20 redirect URIs and a few short fields fits many times. */
    static final int MAX_REGISTRATION_BODY = 64 * 1024;

    private final OAuthServer server;
    private final Signin signin;
    private final RegistrationLimiter limiter;
    private final SigningKeys keys;
    private final BrowserOrigins origins;

    @Activate
    public OAuthEndpoints(
            @Reference OAuthServer server,
            @Reference Signin signin,
            @Reference RegistrationLimiter limiter,
            @Reference SigningKeys keys,
            @Reference BrowserOrigins origins) {
        this.server = server;
        this.signin = signin;
        this.limiter = limiter;
        this.keys = keys;
        this.origins = origins;
    }

    // ---------------------------------------------------------------- authorize

    @GET
    @Path("authorize")
    @NotJson("text/html")
    public Response authorize(@Context UriInfo uri, @Context HttpHeaders headers) {
        Map<String, String> query;
        Authorizations.AuthorizeRequest request;
        try {
            query = Requests.query(uri);
            request = server.checkAuthorize(query);
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        } catch (Authorizations.RedirectError e) {
            return found(e.location());
        }
        Caller user = signin.user(headers);
        if (user == null || request.needsFreshSignIn(Authentication.of(user))) {
            if (request.prompt().contains("none")) {
                return redirect(
                        request,
                        "login_required",
                        user == null
                                ? "the user is not signed in"
                                : "the user signed in longer ago than max_age allows");
            }
            // after signing in the request goes on without what asked for the sign-in, or it would ask again
            return found(OAuthServer.withQuery(
                    "/auth/login", "return_to", OAuthServer.withQuery("/oauth/authorize", pairs(afterSignIn(query)))));
        }
        // a stored consent that covers the scopes is not asked again (OIDC Core 3.1.2.4), unless the client asks for it
        if (!request.prompt().contains("consent")
                && server.consentCovers(user.principalId(), request.client().clientId(), request.scopes())) {
            return found(server.approve(user, request));
        }
        if (request.prompt().contains("none")) {
            return redirect(request, "consent_required", "the user has not consented to these scopes for this client");
        }
        javax.ws.rs.core.Cookie csrf = headers.getCookies().get(SessionVerifier.CSRF_COOKIE);
        return Requests.html(200, consentPage(request, afterSignIn(query), user, csrf == null ? "" : csrf.getValue()));
    }

    /**
     * The consent page's form: approve or deny, as a plain HTML form (no script needed). The session's CSRF token in
     * the form proves the page it came from was this server's.
     */
    @POST
    @Path("authorize")
    @NotJson("text/html")
    public Response decide(@Context HttpHeaders headers, String body) {
        Map<String, String> form;
        try {
            form = Requests.form(body);
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        }
        String csrf = form.remove("csrf_token");
        String decision = form.remove("decision");
        Caller user = signin.formUser(headers, csrf);
        if (user == null) {
            return Requests.html(
                    403,
                    Html.error(
                            "access_denied",
                            "this form is stale or did not come from this server's page, "
                                    + "or the session ended: start again from the application"));
        }
        Authorizations.AuthorizeRequest request;
        try {
            request = server.checkAuthorize(form);
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        } catch (Authorizations.RedirectError e) {
            return seeOther(e.location());
        }
        if (!"approve".equals(decision) && !"deny".equals(decision)) {
            return Requests.html(400, Html.error("invalid_request", "decision must be approve or deny"));
        }
        return seeOther(
                "approve".equals(decision) ? server.approve(user, request) : server.deny(user.principalId(), request));
    }

    /** The request's parameters to go on with after a sign-in: without {@code max_age} and {@code prompt=login}. */
    static Map<String, String> afterSignIn(Map<String, String> query) {
        Map<String, String> out = new LinkedHashMap<>(query);
        out.remove("max_age");
        String prompt = out.remove("prompt");
        if (prompt != null) {
            String rest = java.util.Arrays.stream(prompt.trim().split("\\s+"))
                    .filter(v -> !v.isEmpty() && !v.equals("login"))
                    .collect(java.util.stream.Collectors.joining(" "));
            if (!rest.isEmpty()) {
                out.put("prompt", rest);
            }
        }
        return out;
    }

    private static String[] pairs(Map<String, String> m) {
        String[] out = new String[m.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : m.entrySet()) {
            out[i++] = e.getKey();
            out[i++] = e.getValue();
        }
        return out;
    }

    private static Response found(String location) {
        return Response.status(302)
                .header("Location", location)
                .header("Cache-Control", "no-store")
                .build();
    }

    private static Response seeOther(String location) {
        return Response.status(303)
                .header("Location", location)
                .header("Cache-Control", "no-store")
                .build();
    }

    /** An error for the client at its (verified) redirect URI, with its state. */
    private static Response redirect(Authorizations.AuthorizeRequest r, String error, String description) {
        return found(OAuthServer.withQuery(
                r.redirectUri(), "error", error, "error_description", description, "state", r.state()));
    }

    private String consentPage(
            Authorizations.AuthorizeRequest r, Map<String, String> params, Caller user, String csrf) {
        StringBuilder scopes = new StringBuilder("<ul id=\"scopes\">");
        for (String s : r.scopes()) {
            scopes.append("<li data-scope=\"")
                    .append(Html.esc(s))
                    .append("\"><code>")
                    .append(Html.esc(s))
                    .append("</code> ")
                    .append(Html.esc(ScopeSet.KNOWN.get(s)))
                    .append("</li>");
        }
        scopes.append("</ul>");
        StringBuilder hidden = new StringBuilder();
        params.forEach((k, v) -> hidden.append("<input type=\"hidden\" name=\"")
                .append(Html.esc(k))
                .append("\" value=\"")
                .append(Html.esc(v))
                .append("\">"));
        hidden.append("<input type=\"hidden\" name=\"csrf_token\" value=\"")
                .append(Html.esc(csrf))
                .append("\">");
        String who = server.principals()
                .get(user.principalId())
                .map(PrincipalDirectory.Entry::username)
                .orElse(user.principalId());
        return Html.page(
                "Authorize " + r.client().name(),
                "<h1>Authorize <span id=\"client\">" + Html.esc(r.client().name())
                        + "</span></h1><p>Signed in as <b>" + Html.esc(who) + "</b>. <b>"
                        + Html.esc(r.client().name())
                        + "</b> asks to:</p>" + scopes + "<p>You will be sent back to <code>"
                        + Html.esc(r.redirectUri()) + "</code>.</p>"
                        + "<form method=\"post\" action=\"/oauth/authorize\">" + hidden
                        + "<button id=\"approve\" type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>"
                        + "<button id=\"deny\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>");
    }

    // ---------------------------------------------------------------- device verification page

    @GET
    @Path("device")
    @NotJson("text/html")
    public Response devicePage(@Context UriInfo uri, @Context HttpHeaders headers) {
        Caller user = signin.user(headers);
        if (user == null) {
            String back = uri.getRequestUri().getRawPath()
                    + (uri.getRequestUri().getRawQuery() == null
                            ? ""
                            : "?" + uri.getRequestUri().getRawQuery());
            return Response.status(302)
                    .header("Location", OAuthServer.withQuery("/auth/login", "return_to", back))
                    .build();
        }
        String code = uri.getQueryParameters().getFirst("user_code");
        return Requests.html(
                200,
                Html.page(
                        "Connect a device",
                        "<h1>Connect a device</h1><p>Enter the code your device shows.</p>"
                                + "<input id=\"code\" value=\"" + Html.esc(code)
                                + "\" autocomplete=\"off\"> <button id=\"check\" onclick=\"check()\">Continue</button>"
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

    // ---------------------------------------------------------------- token, device authorization, introspection,
    // revocation

    // POST /oauth/token, /oauth/introspect and /oauth/revoke are served by TokenServlet, outside JAX-RS.

    @POST
    @Path("device_authorization")
    @JsonShape(OAuthJson.DeviceAuthorization.class)
    public Response deviceAuthorization(@Context UriInfo uri, @Context HttpHeaders headers, String body) {
        try {
            Map<String, String> p = Requests.body(headers, body);
            return Requests.json(
                    200, server.deviceAuthorization(server.issuer(uri.getBaseUri()), authenticate(headers, p), p));
        } catch (OAuthError e) {
            return Requests.error(e);
        }
    }

    private Client authenticate(HttpHeaders headers, Map<String, String> p) {
        Client client = server.authenticate(
                headers.getHeaderString(HttpHeaders.AUTHORIZATION), p.remove("client_id"), p.remove("client_secret"));
        return client;
    }

    // ---------------------------------------------------------------- UserInfo

    @GET
    @Path("userinfo")
    @JsonShape(OAuthJson.UserInfo.class)
    public Response userinfo(@Context HttpHeaders headers) {
        return withCors(userinfoOf(headers), headers);
    }

    @POST
    @Path("userinfo")
    @JsonShape(OAuthJson.UserInfo.class)
    public Response userinfoPost(@Context HttpHeaders headers) {
        return withCors(userinfoOf(headers), headers);
    }

    /** CORS preflight for UserInfo from a registered public client's origin. */
    @OPTIONS
    @Path("userinfo")
    public Response userinfoPreflight(@Context HttpHeaders headers) {
        Response.ResponseBuilder r = Response.noContent().header("Allow", "GET, POST, OPTIONS");
        origins.preflight(headers.getHeaderString("Origin"), "GET, POST").forEach(r::header);
        return r.build();
    }

    private Response withCors(Response response, HttpHeaders headers) {
        Response.ResponseBuilder r = Response.fromResponse(response);
        origins.headersFor(headers.getHeaderString("Origin")).forEach(r::header);
        // a browser script reads the bearer challenge of an error only when it is exposed
        r.header("Access-Control-Expose-Headers", "WWW-Authenticate");
        return r.build();
    }

    // ---------------------------------------------------------------- RP-initiated logout (OpenID Connect RP-Initiated
    // Logout 1.0)

    @GET
    @Path("end_session")
    @Produces(MediaType.TEXT_HTML)
    public Response endSession(@Context UriInfo uri, @Context HttpHeaders headers) {
        try {
            return endSession(Requests.query(uri), uri, headers);
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        }
    }

    @POST
    @Path("end_session")
    @Produces(MediaType.TEXT_HTML)
    public Response endSessionPost(@Context UriInfo uri, @Context HttpHeaders headers, String body) {
        try {
            return endSession(Requests.form(body), uri, headers);
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        }
    }

    /**
     * Checks the relying party's request, then asks the signed-in user to confirm (an ID token is no proof that the
     * user wants to sign out: it may have leaked, and a page could send anyone here). The confirmation posts to the
     * identity bundle's sign-out, which comes back to {@code end_session/done} and from there to the relying party.
     */
    private Response endSession(Map<String, String> p, UriInfo uri, HttpHeaders headers) {
        LogoutRequest logout = logoutRequest(p, server.issuer(uri.getBaseUri()));
        Caller user = signin.user(headers);
        javax.ws.rs.core.Cookie csrf = headers.getCookies().get(SessionVerifier.CSRF_COOKIE);
        if (user == null || !"session".equals(user.authMethod()) || csrf == null) {
            return logout.leave();
        }
        String done = OAuthServer.withQuery(
                "/oauth/end_session/done",
                "client_id",
                logout.client() == null ? null : logout.client().clientId(),
                "post_logout_redirect_uri",
                logout.postLogoutRedirectUri(),
                "state",
                logout.state());
        String who = server.principals()
                .get(user.principalId())
                .map(PrincipalDirectory.Entry::username)
                .orElse(user.principalId());
        String app = logout.client() == null ? null : logout.client().name();
        return Requests.html(
                200,
                Html.page(
                        "Sign out",
                        "<h1>Sign out of Atrium?</h1><p>You are signed in as <b>" + Html.esc(who) + "</b>."
                                + (app == null
                                        ? ""
                                        : " <b id=\"client\">" + Html.esc(app) + "</b> asks to sign you out.")
                                + "</p>"
                                + "<form method=\"post\" action=\"/auth/logout\"><input type=\"hidden\" name=\"csrf_token\" value=\""
                                + Html.esc(csrf.getValue())
                                + "\"><input type=\"hidden\" name=\"return_to\" value=\"" + Html.esc(done) + "\">"
                                + "<button id=\"logout\" type=\"submit\">Sign out</button> <a id=\"cancel\" href=\"/\">Stay signed in</a></form>"));
    }

    /** After the sign-out: on to the relying party's registered URI, or a page that says it is done. */
    @GET
    @Path("end_session/done")
    @Produces(MediaType.TEXT_HTML)
    public Response endSessionDone(@Context UriInfo uri) {
        try {
            return logoutRequest(Requests.query(uri), server.issuer(uri.getBaseUri()))
                    .leave();
        } catch (OAuthError e) {
            return Requests.html(400, Html.error(e.error, e.getMessage()));
        }
    }

    /** A checked logout request: the client (from id_token_hint or client_id) and its registered post-logout URI, if any. */
    private record LogoutRequest(Client client, String postLogoutRedirectUri, String state) {

        Response leave() {
            if (postLogoutRedirectUri == null) {
                return Requests.html(
                        200,
                        Html.page(
                                "Signed out",
                                "<h1 id=\"signed-out\">You are signed out</h1>"
                                        + "<p><a href=\"/auth/login\">Sign in again</a></p>"));
            }
            return found(OAuthServer.withQuery(postLogoutRedirectUri, "state", state));
        }
    }

    private LogoutRequest logoutRequest(Map<String, String> p, String issuer) {
        String clientId = p.get("client_id");
        String hint = p.get("id_token_hint");
        if (hint != null && !hint.isEmpty()) {
            Map<String, Object> claims = keys.verifiedClaims(hint);
            if (claims == null || !issuer.equals(claims.get("iss"))) {
                throw OAuthError.invalidRequest("id_token_hint is not an ID token this server issued");
            }
            Object aud = claims.get("aud");
            String audience = aud instanceof List<?> l && l.size() == 1
                    ? String.valueOf(l.get(0))
                    : aud instanceof String s ? s : null;
            if (audience == null || (clientId != null && !clientId.equals(audience))) {
                throw OAuthError.invalidRequest("client_id is not the audience of id_token_hint");
            }
            clientId = audience;
        }
        Client client = null;
        if (clientId != null && !clientId.isEmpty()) {
            client = server.client(clientId)
                    .orElseThrow(() -> new OAuthError("invalid_client", "unknown client_id", 400));
        }
        String target = p.get("post_logout_redirect_uri");
        if (target != null && !target.isEmpty()) {
            if (client == null) {
                throw OAuthError.invalidRequest(
                        "post_logout_redirect_uri needs id_token_hint or client_id to name the client");
            }
            String given = target;
            if (!client.postLogoutRedirectUris().contains(given)
                    && client.postLogoutRedirectUris().stream()
                            .noneMatch(r -> Authorizations.sameLoopbackRedirect(r, given))) {
                throw OAuthError.invalidRequest("post_logout_redirect_uri is not registered for this client");
            }
        } else {
            target = null;
        }
        String state = p.get("state");
        if (state != null && state.length() > 500) {
            throw OAuthError.invalidRequest("state is too long");
        }
        return new LogoutRequest(client, target, state);
    }

    private Response userinfoOf(HttpHeaders headers) {
        String authorization = headers.getHeaderString(HttpHeaders.AUTHORIZATION);
        String token = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                ? authorization.substring(7).trim()
                : null;
        if (token == null || token.isEmpty()) {
            return Requests.bearerError(
                    new OAuthError(
                            "invalid_request",
                            "UserInfo needs an access token: send Authorization: Bearer <token>",
                            401),
                    null,
                    false);
        }
        IssuedTokens.Bearer bearer = server.bearer(token).orElse(null);
        if (bearer == null || bearer.principalId() == null || !server.principalActive(bearer.principalId())) {
            return Requests.bearerError(
                    OAuthError.invalidToken("the access token is invalid, expired or revoked"), null, true);
        }
        if (!bearer.scopes().contains("openid")) {
            return Requests.bearerError(
                    new OAuthError("insufficient_scope", "UserInfo needs the openid scope", 403), "openid", true);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sub", bearer.principalId());
        m.putAll(server.profileClaims(bearer.principalId(), bearer.scopes()));
        return Requests.json(200, m);
    }

    // ---------------------------------------------------------------- dynamic client registration (RFC 7591, 7592)

    @POST
    @Path("register")
    @JsonShape(OAuthJson.Registered.class)
    public Response register(
            @Context UriInfo uri,
            @Context javax.servlet.http.HttpServletRequest request,
            @JsonShape(OAuthJson.ClientInput.class) String body) {
        RegistrationLimiter.Refusal refused = limiter.attempt(request.getRemoteAddr());
        if (refused != null) {
            return Response.fromResponse(Requests.error(new OAuthError(
                            "temporarily_unavailable",
                            refused.reason() + "; try again in " + refused.retryAfterSeconds() + " s",
                            429)))
                    .header("Retry-After", Long.toString(refused.retryAfterSeconds()))
                    .build();
        }
        if (body != null && body.length() > MAX_REGISTRATION_BODY) {
            return registrationError(
                    "invalid_client_metadata",
                    "the client metadata is larger than " + MAX_REGISTRATION_BODY + " bytes");
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
    @JsonShape(OAuthJson.ClientView.class)
    public Response registration(@Context HttpHeaders headers, @PathParam("clientId") String clientId) {
        String authorization = headers.getHeaderString(HttpHeaders.AUTHORIZATION);
        String token = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                ? authorization.substring(7).trim()
                : null;
        return server.clientByRegistrationToken(clientId, token)
                .map(c -> Requests.json(200, c.toJson()))
                .orElseGet(() -> Requests.error(OAuthError.invalidToken("the registration access token is invalid")));
    }

    /** Client metadata from JSON: RFC 7591 names ({@code redirect_uris}, {@code scope}) or the API's. */
    static OAuthClients.ClientSpec spec(
            JsonNode node, java.util.function.Function<String, RuntimeException> invalid, boolean dynamic) {
        List<String> uris = uris(node, "redirect_uris", invalid);
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
        return new OAuthClients.ClientSpec(
                name,
                uris,
                grants,
                scopes,
                authMethod,
                text(node, "client_uri", invalid),
                text(node, "logo_uri", invalid),
                uris(node, "post_logout_redirect_uris", invalid),
                null,
                null);
    }

    private static List<String> uris(
            JsonNode node, String field, java.util.function.Function<String, RuntimeException> invalid) {
        List<String> uris = new ArrayList<>();
        JsonNode r = node.get(field);
        if (r != null && !r.isNull()) {
            if (!r.isArray()) {
                throw invalid.apply(field + " must be an array of URIs");
            }
            if (r.size() > OAuthClients.MAX_REDIRECT_URIS) {
                throw invalid.apply(field + " may hold at most " + OAuthClients.MAX_REDIRECT_URIS + " URIs");
            }
            for (JsonNode u : r) {
                if (!u.isTextual()) {
                    throw invalid.apply(field + " must be an array of URIs");
                }
                uris.add(u.asText());
            }
        }
        return uris;
    }

    private static String text(
            JsonNode node, String field, java.util.function.Function<String, RuntimeException> invalid) {
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
