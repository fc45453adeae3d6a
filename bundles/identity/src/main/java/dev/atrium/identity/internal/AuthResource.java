package dev.atrium.identity.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.SelfAuthenticated;
import dev.atrium.kernel.api.SessionVerifier;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Browser sign-in under {@code /auth}: {@code /auth/login} (an OpenID Connect provider, or the local password form),
 * {@code /auth/callback}, {@code /auth/link/<provider>} and its callback, {@code /auth/cli} and
 * {@code /auth/external/session}. These are pages and redirects, outside the kernel's API gate.
 */
@Component(service = AuthResource.class)
@KernelResource
@SelfAuthenticated
@Path("/auth")
public class AuthResource {

    private static final Logger LOG = LoggerFactory.getLogger(AuthResource.class);

    private final IdentityService identity;

    private final dev.atrium.kernel.api.PublicUrls urls;

    @Activate
    public AuthResource(@Reference IdentityService identity, @Reference dev.atrium.kernel.api.PublicUrls urls) {
        this.identity = identity;
        this.urls = urls;
    }

    /** The operator's public base URL, else (the kernel warned at start) this request's scheme and Host. */
    private String base(UriInfo uri) {
        return urls.base(uri.getBaseUri());
    }

    private boolean secure(UriInfo uri, HttpHeaders headers) {
        return "https".equalsIgnoreCase(uri.getBaseUri().getScheme())
                || "https".equalsIgnoreCase(headers.getHeaderString("X-Forwarded-Proto"))
                || urls.configured().map(u -> u.startsWith("https:")).orElse(false);
    }

    static final String FLOW_COOKIE = "atrium_signin_flow";

    static String flowBinding(String state) {
        return Digests.sha256Base64Url(state == null ? "" : state);
    }

    /** Whether the callback's {@code state} is the one this browser's sign-in started with. */
    private static boolean sameBrowser(HttpHeaders headers, String state) {
        javax.ws.rs.core.Cookie c = headers.getCookies().get(FLOW_COOKIE);
        return c != null && Digests.constantTimeEquals(c.getValue(), flowBinding(state));
    }

    private static String cookie(HttpHeaders headers) {
        javax.ws.rs.core.Cookie c = headers.getCookies().get(SessionVerifier.COOKIE);
        return c == null ? null : c.getValue();
    }

    private static Response html(int status, String page) {
        return Response.status(status)
                .type(MediaType.TEXT_HTML_TYPE.withCharset("utf-8"))
                .entity(page)
                .header("Cache-Control", "no-store")
                .header("X-Frame-Options", "DENY")
                .header("Content-Security-Policy", "frame-ancestors 'none'")
                .build();
    }

    private static Response error(int status, String message) {
        return html(
                status,
                Util.page(
                        "Sign-in failed",
                        "<h1>Sign-in failed</h1><p class=\"err\" id=\"error\">" + Util.esc(message) + "</p>"
                                + "<p><a href=\"/auth/login\">Try again</a></p>"));
    }

    // ---------------------------------------------------------------- login

    @GET
    @Path("login")
    @NotJson("text/html")
    public Response login(
            @Context UriInfo uri,
            @Context HttpHeaders headers,
            @QueryParam("provider") String provider,
            @QueryParam("return_to") String returnTo,
            @QueryParam("error") String error) {
        String back = Util.safeReturn(returnTo);
        if (provider == null || provider.isEmpty()) {
            var providers = identity.providers();
            if (providers.size() == 1) {
                provider = (String) providers.get(0).get("name");
            } else {
                return html(200, chooser(back, error));
            }
        }
        if (IdentityService.LOCAL.equals(provider)) {
            return html(200, localForm(back, error));
        }
        OidcClient.Provider p = identity.provider(provider).orElse(null);
        if (p == null) {
            return error(404, "unknown identity provider '" + provider + "'");
        }
        return redirectTo(uri, headers, p, "login", back, null, base(uri) + "/auth/callback");
    }

    private Response redirectTo(
            UriInfo uri,
            HttpHeaders headers,
            OidcClient.Provider p,
            String mode,
            String back,
            String principalId,
            String redirectUri) {
        IdentityService.Flow flow = identity.startFlow(p.name(), mode, back, principalId);
        try {
            // the flow belongs to this browser: the callback must come back with this cookie (RFC 6749 §10.12),
            // or a callback URL someone else started would sign this browser into their account
            return Response.status(302)
                    .header(
                            "Location",
                            identity.oidc.authorizationUrl(p, redirectUri, flow.state(), flow.nonce(), flow.verifier()))
                    .header(
                            "Set-Cookie",
                            FLOW_COOKIE + "=" + flowBinding(flow.state())
                                    + "; Path=/auth; Max-Age=900; HttpOnly; SameSite=Lax"
                                    + (secure(uri, headers) ? "; Secure" : ""))
                    .header("Cache-Control", "no-store")
                    .build();
        } catch (OidcClient.Refused e) {
            LOG.warn("identity provider {}: {}", p.name(), e.getMessage());
            return error(502, "the identity provider cannot be reached: " + e.getMessage());
        }
    }

    private String chooser(String back, String error) {
        StringBuilder sb = new StringBuilder("<h1>Sign in</h1>");
        if (error != null) {
            sb.append("<p class=\"err\" id=\"error\">").append(Util.esc(error)).append("</p>");
        }
        for (Map<String, Object> p : identity.providers()) {
            String name = (String) p.get("name");
            sb.append("<p><a id=\"provider-")
                    .append(Util.esc(name))
                    .append("\" href=\"")
                    .append(Util.esc(Util.withQuery("/auth/login", "provider", name, "return_to", back)))
                    .append("\">Sign in with ")
                    .append(Util.esc(name))
                    .append("</a></p>");
        }
        sb.append("<p><a id=\"provider-local\" href=\"")
                .append(Util.esc(Util.withQuery("/auth/login", "provider", "local", "return_to", back)))
                .append("\">Sign in with a username and password</a></p>");
        return Util.page("Sign in", sb.toString());
    }

    private static String localForm(String back, String error) {
        return Util.page(
                "Sign in",
                "<h1>Sign in</h1>" + (error == null ? "" : "<p class=\"err\" id=\"error\">" + Util.esc(error) + "</p>")
                        + "<form method=\"post\" action=\"/auth/login/local\"><input type=\"hidden\" name=\"return_to\" value=\""
                        + Util.esc(back)
                        + "\"><label>Username <input id=\"username\" name=\"username\" autocomplete=\"username\" required></label>"
                        + "<label>Password <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required></label>"
                        + "<button id=\"submit\" type=\"submit\">Sign in</button></form>");
    }

    @POST
    @Path("login/local")
    @NotJson("text/html")
    public Response localLogin(@Context UriInfo uri, @Context HttpHeaders headers, String body) {
        MediaType type = headers.getMediaType();
        Map<String, String> form;
        if (type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE)) {
            try {
                form = Jwt.JSON.convertValue(
                        Jwt.JSON.readTree(body),
                        Jwt.JSON.getTypeFactory().constructMapType(Map.class, String.class, String.class));
            } catch (java.io.IOException | IllegalArgumentException e) {
                form = null;
            }
            if (form == null) {
                // an empty body, JSON null, or not an object of strings: no credentials
                form = Map.of();
            }
        } else {
            form = Util.form(body);
        }
        if (!sameOrigin(uri, headers)) {
            // a cross-site form post would sign the browser into someone else's account (login CSRF)
            return error(403, "sign-in forms are accepted from this server's own pages only");
        }
        String back = Util.safeReturn(form.get("return_to"));
        String username =
                form.get("username") == null ? "" : form.get("username").trim().toLowerCase(java.util.Locale.ROOT);
        String password = form.get("password") == null ? "" : form.get("password");
        var principal = identity.checkPassword(username, password.toCharArray());
        if (principal.isEmpty()) {
            return html(401, localForm(back, "wrong username or password"));
        }
        return signedIn(uri, headers, principal.get(), IdentityService.LOCAL, back);
    }

    /**
     * Whether a browser request comes from this server's own pages: browsers send {@code Origin} on POSTs (and
     * {@code Sec-Fetch-Site}); a request without either (curl, a test client) is not a cross-site browser post.
     */
    boolean sameOrigin(UriInfo uri, HttpHeaders headers) {
        String site = headers.getHeaderString("Sec-Fetch-Site");
        if (site != null && !site.equals("same-origin") && !site.equals("none")) {
            return false;
        }
        String origin = headers.getHeaderString("Origin");
        if (origin == null || origin.isEmpty()) {
            return true;
        }
        String own = urls.configured()
                .map(u -> java.net.URI.create(u).getRawAuthority())
                .orElseGet(() -> {
                    String host = headers.getHeaderString("Host");
                    return host != null ? host : uri.getBaseUri().getRawAuthority();
                });
        try {
            // the authority only: behind a TLS-terminating proxy the scheme seen here differs from the browser's
            return own.equalsIgnoreCase(new java.net.URI(origin).getRawAuthority());
        } catch (java.net.URISyntaxException e) {
            return false;
        }
    }

    /** Starts a fresh session (ending the browser's previous one) and sends the browser on. */
    private Response signedIn(UriInfo uri, HttpHeaders headers, String principalId, String provider, String back) {
        PrincipalDirectory.Entry p = identity.principals().get(principalId).orElse(null);
        if (p == null || !p.active()) {
            return error(403, "this account is suspended");
        }
        IdentityService.NewSession s = identity.createSession(principalId, provider, cookie(headers));
        boolean secure = secure(uri, headers);
        long maxAge = IdentityService.SESSION_TTL.toSeconds();
        String target = back;
        if (p.username() == null && "/".equals(back)) {
            target = "/?setup=username";
        }
        return Response.status(302)
                .header("Location", target)
                .header("Cache-Control", "no-store")
                .header(
                        "Set-Cookie",
                        SessionVerifier.COOKIE + "=" + s.cookie() + "; Path=/; Max-Age=" + maxAge
                                + "; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : ""))
                .header(
                        "Set-Cookie",
                        SessionVerifier.CSRF_COOKIE + "=" + s.csrf() + "; Path=/; Max-Age=" + maxAge + "; SameSite=Lax"
                                + (secure ? "; Secure" : ""))
                .build();
    }

    // ---------------------------------------------------------------- sign-out from a page

    /**
     * Signs the browser out from an HTML form (the OAuth server's end-session confirmation): the form carries the
     * session's CSRF token, since a form cannot send the header the API's logout needs. Then on to {@code return_to}.
     */
    @POST
    @Path("logout")
    @NotJson
    public Response formLogout(@Context UriInfo uri, @Context HttpHeaders headers, String body) {
        Map<String, String> form = Util.form(body);
        String back = Util.safeReturn(form.get("return_to"));
        IdentityService.Live session = identity.live(cookie(headers)).orElse(null);
        if (session != null) {
            String csrf = form.get("csrf_token");
            if (!sameOrigin(uri, headers)
                    || csrf == null
                    || !dev.atrium.kernel.api.Digests.constantTimeEquals(csrf, session.csrf())) {
                return error(403, "sign-out forms are accepted from this server's own pages only");
            }
            identity.endSession(cookie(headers));
        }
        return Response.status(303)
                .header("Location", back)
                .header("Cache-Control", "no-store")
                .header("Set-Cookie", SessionVerifier.COOKIE + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax")
                .header("Set-Cookie", SessionVerifier.CSRF_COOKIE + "=; Path=/; Max-Age=0; SameSite=Lax")
                .build();
    }

    // ---------------------------------------------------------------- the provider's answer

    @GET
    @Path("callback")
    @NotJson("text/html")
    public Response callback(
            @Context UriInfo uri,
            @Context HttpHeaders headers,
            @QueryParam("code") String code,
            @QueryParam("state") String state,
            @QueryParam("error") String error) {
        if (!sameBrowser(headers, state)) {
            return error(400, "this sign-in was not started in this browser; start again");
        }
        IdentityService.Flow flow =
                identity.takeFlow(state).filter(f -> "login".equals(f.mode())).orElse(null);
        if (flow == null) {
            return error(400, "this sign-in is unknown or has expired; start again");
        }
        if (error != null) {
            return error(401, "the identity provider refused: " + error);
        }
        OidcClient.Provider p = identity.provider(flow.provider()).orElse(null);
        if (p == null || code == null) {
            return error(400, "the identity provider sent no code");
        }
        JsonNode claims;
        try {
            claims = identity.oidc.exchange(p, code, base(uri) + "/auth/callback", flow.verifier(), flow.nonce());
        } catch (OidcClient.Refused e) {
            LOG.info("sign-in with {} refused: {}", p.name(), e.getMessage());
            return error(401, e.getMessage());
        }
        PrincipalDirectory.Entry principal = identity.signIn(p.name(), claims);
        return signedIn(uri, headers, principal.id(), p.name(), flow.returnTo());
    }

    // ---------------------------------------------------------------- account links

    @GET
    @Path("link/{provider}")
    @NotJson("text/html")
    public Response link(
            @Context UriInfo uri,
            @Context HttpHeaders headers,
            @PathParam("provider") String provider,
            @QueryParam("return_to") String returnTo) {
        IdentityService.Live session = identity.live(cookie(headers)).orElse(null);
        if (session == null) {
            String here = uri.getRequestUri().getRawPath()
                    + (uri.getRequestUri().getRawQuery() == null
                            ? ""
                            : "?" + uri.getRequestUri().getRawQuery());
            return Response.status(302)
                    .header("Location", Util.withQuery("/auth/login", "return_to", here))
                    .build();
        }
        OidcClient.Provider p = identity.provider(provider).orElse(null);
        if (p == null) {
            return error(404, "unknown identity provider '" + provider + "'");
        }
        return redirectTo(
                uri,
                headers,
                p,
                "link",
                Util.safeReturn(returnTo),
                session.principalId(),
                base(uri) + "/auth/link/" + p.name() + "/callback");
    }

    @GET
    @Path("link/{provider}/callback")
    @NotJson("text/html")
    public Response linkCallback(
            @Context UriInfo uri,
            @Context HttpHeaders headers,
            @PathParam("provider") String provider,
            @QueryParam("code") String code,
            @QueryParam("state") String state,
            @QueryParam("error") String error) {
        if (!sameBrowser(headers, state)) {
            return error(400, "this account link was not started in this browser");
        }
        IdentityService.Flow flow = identity.takeFlow(state)
                .filter(f -> "link".equals(f.mode()) && f.provider().equals(provider))
                .orElse(null);
        IdentityService.Live session = identity.live(cookie(headers)).orElse(null);
        if (flow == null || session == null || !session.principalId().equals(flow.principalId())) {
            return error(400, "this account link is unknown, has expired, or belongs to another session");
        }
        if (error != null || code == null) {
            return error(401, "the identity provider refused: " + (error == null ? "no code" : error));
        }
        OidcClient.Provider p = identity.provider(provider).orElse(null);
        if (p == null) {
            return error(404, "unknown identity provider '" + provider + "'");
        }
        JsonNode claims;
        try {
            claims = identity.oidc.exchange(
                    p, code, base(uri) + "/auth/link/" + p.name() + "/callback", flow.verifier(), flow.nonce());
        } catch (OidcClient.Refused e) {
            return error(401, e.getMessage());
        }
        try {
            identity.link(session.principalId(), p.name(), claims.path("sub").asText());
        } catch (ApiException e) {
            if (e.status() == 409) {
                return Response.status(409)
                        .type(MediaType.APPLICATION_JSON_TYPE)
                        .entity(ApiException.body("CONFLICT", e.getMessage()))
                        .build();
            }
            throw e;
        }
        return Response.status(302).header("Location", flow.returnTo()).build();
    }

    // ---------------------------------------------------------------- CLI login

    @GET
    @Path("cli")
    @NotJson("text/html")
    public Response cli(
            @Context UriInfo uri,
            @Context HttpHeaders headers,
            @QueryParam("port") String port,
            @QueryParam("state") String state) {
        if (port == null
                || !port.matches("\\d{2,5}")
                || Integer.parseInt(port) > 65535
                || state == null
                || !state.matches("[A-Za-z0-9_-]{8,128}")) {
            return error(400, "the CLI must send its loopback port and a state");
        }
        IdentityService.Live session = identity.live(cookie(headers)).orElse(null);
        if (session == null) {
            String here =
                    uri.getRequestUri().getRawPath() + "?" + uri.getRequestUri().getRawQuery();
            return Response.status(302)
                    .header("Location", Util.withQuery("/auth/login", "return_to", here))
                    .build();
        }
        return html(
                200,
                Util.page(
                        "Sign in the CLI",
                        "<h1>Sign in the command line</h1><p>A program on this computer (port "
                                + Util.esc(port)
                                + ") asks for a personal access token with full access.</p><form method=\"post\" action=\"/auth/cli\">"
                                + "<input type=\"hidden\" name=\"port\" value=\"" + Util.esc(port)
                                + "\"><input type=\"hidden\" name=\"state\" value=\""
                                + Util.esc(state) + "\"><input type=\"hidden\" name=\"csrf\" value=\""
                                + Util.esc(session.csrf()) + "\">"
                                + "<button id=\"approve\" type=\"submit\">Allow</button></form>"));
    }

    @POST
    @Path("cli")
    @NotJson("text/html")
    public Response cliApprove(@Context HttpHeaders headers, String body) {
        Map<String, String> form = Util.form(body);
        IdentityService.Live session = identity.live(cookie(headers)).orElse(null);
        String port = form.get("port");
        String state = form.get("state");
        if (session == null || !Digests.constantTimeEquals(form.get("csrf"), session.csrf())) {
            return error(403, "this approval did not come from your session");
        }
        if (port == null || !port.matches("\\d{2,5}") || state == null || !state.matches("[A-Za-z0-9_-]{8,128}")) {
            return error(400, "the CLI must send its loopback port and a state");
        }
        String token = identity.principals().createPersonalAccessToken(session.principalId(), "cli login");
        return Response.status(302)
                .header(
                        "Location",
                        Util.withQuery(
                                "http://127.0.0.1:" + Integer.parseInt(port) + "/callback",
                                "token",
                                token,
                                "state",
                                state))
                .header("Cache-Control", "no-store")
                .build();
    }

    // ---------------------------------------------------------------- session check

    @GET
    @Path("external/session")
    @JsonShape(IdentityJson.Session.class)
    public Response session(@Context HttpHeaders headers) {
        IdentityService.Live session = identity.live(cookie(headers)).orElse(null);
        PrincipalDirectory.Entry p = session == null
                ? null
                : identity.principals()
                        .get(session.principalId())
                        .filter(PrincipalDirectory.Entry::active)
                        .orElse(null);
        if (p == null) {
            return Response.status(401)
                    .type(MediaType.APPLICATION_JSON_TYPE)
                    .header("Cache-Control", "no-store")
                    .entity(ApiException.body("UNAUTHORIZED", "no session"))
                    .build();
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("authenticated", true);
        m.put(
                "user",
                Map.of(
                        "id",
                        p.id(),
                        "username",
                        p.username() == null ? "" : p.username(),
                        "name",
                        p.name() == null ? "" : p.name()));
        m.put("provider", session.provider());
        m.put("csrf_token", session.csrf());
        m.put("expires_at", session.expiresAt().toString());
        return Response.ok(m, MediaType.APPLICATION_JSON_TYPE)
                .header("Cache-Control", "no-store")
                .build();
    }
}
