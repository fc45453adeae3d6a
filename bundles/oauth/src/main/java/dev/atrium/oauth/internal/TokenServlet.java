package dev.atrium.oauth.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.servlet.Servlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardServletPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hot endpoints of the OAuth server, {@code POST /oauth/token}, {@code /oauth/introspect} and
 * {@code /oauth/revoke}, as a plain servlet: exact whiteboard patterns win over the JAX-RS whiteboard's
 * {@code /*}, and machine-to-machine calls skip the JAX-RS pipeline. They speak only OAuth (RFC 6749, 7662, 7009):
 * form-urlencoded or JSON bodies, HTTP Basic or body client credentials, OAuth error bodies.
 */
@Component(service = Servlet.class)
@HttpWhiteboardServletPattern({"/oauth/token", "/oauth/introspect", "/oauth/revoke"})
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=default)")
public class TokenServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(TokenServlet.class);
    private static final int MAX_BODY = 64 * 1024;

    private final transient OAuthServer server;
    private final transient BrowserOrigins origins;

    @Activate
    public TokenServlet(@Reference OAuthServer server, @Reference BrowserOrigins origins) {
        this.server = server;
        this.origins = origins;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
        // a single-page app (a public client) exchanges and revokes its tokens from the browser; introspection is for
        // servers
        boolean browserOpen = !"/oauth/introspect".equals(req.getRequestURI());
        String origin = req.getHeader("Origin");
        if (browserOpen && "OPTIONS".equals(req.getMethod())) {
            origins.preflight(origin, "POST").forEach(res::setHeader);
            res.setHeader("Allow", "POST, OPTIONS");
            res.setStatus(204);
            return;
        }
        if (browserOpen) {
            origins.headersFor(origin).forEach(res::setHeader);
        }
        if (!"POST".equals(req.getMethod())) {
            res.setHeader("Allow", "POST");
            write(res, 405, Map.of("error", "invalid_request", "error_description", "use POST"));
            return;
        }
        String path = req.getRequestURI();
        try {
            Map<String, String> p = Requests.body(req.getContentType(), read(req));
            Client client = server.authenticate(
                    req.getHeader("Authorization"), p.remove("client_id"), p.remove("client_secret"));
            switch (path) {
                case "/oauth/token" -> write(res, 200, server.token(issuer(req), client, p));
                case "/oauth/introspect" -> {
                    if (client.isPublic()) {
                        // the metadata lists only secret-based methods here: a client_id alone proves nothing
                        throw OAuthError.invalidClient(
                                "introspection needs client authentication: client_secret_basic or client_secret_post");
                    }
                    String token = p.get("token");
                    if (token == null || token.isEmpty()) {
                        throw OAuthError.invalidRequest("token is required");
                    }
                    write(res, 200, server.introspect(issuer(req), client, token));
                }
                default -> {
                    server.revoke(client, p.get("token"));
                    res.setStatus(200);
                    res.setHeader("Cache-Control", "no-store");
                    res.setContentLength(0);
                }
            }
        } catch (OAuthError e) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("error", e.error);
            m.put("error_description", e.getMessage());
            if (e.status == 401) {
                res.setHeader("WWW-Authenticate", "Basic realm=\"atrium\"");
            }
            write(res, e.status, m);
        } catch (RuntimeException e) {
            LOG.error("{} failed", path, e);
            write(res, 500, Map.of("error", "server_error", "error_description", "internal error"));
        }
    }

    private static String read(HttpServletRequest req) throws IOException {
        if (req.getContentLengthLong() > MAX_BODY) {
            throw OAuthError.invalidRequest("the body is larger than " + MAX_BODY + " bytes");
        }
        try (InputStream in = req.getInputStream()) {
            byte[] bytes = in.readNBytes(MAX_BODY + 1);
            if (bytes.length > MAX_BODY) {
                throw OAuthError.invalidRequest("the body is larger than " + MAX_BODY + " bytes");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** As {@link OAuthServer#issuer}, from this request's scheme and Host when nothing is configured. */
    private String issuer(HttpServletRequest req) {
        String host = req.getHeader("Host");
        java.net.URI base;
        try {
            base = new java.net.URI(req.getScheme() + "://"
                    + (host == null || host.isBlank() ? req.getServerName() + ":" + req.getServerPort() : host));
        } catch (java.net.URISyntaxException e) {
            base = java.net.URI.create(req.getScheme() + "://" + req.getServerName() + ":" + req.getServerPort());
        }
        return server.issuer(base);
    }

    private static void write(HttpServletResponse res, int status, Object body) throws IOException {
        byte[] bytes = Requests.JSON.writeValueAsBytes(body);
        res.setStatus(status);
        res.setContentType("application/json");
        res.setHeader("Cache-Control", "no-store");
        res.setHeader("Pragma", "no-cache");
        res.setContentLength(bytes.length);
        res.getOutputStream().write(bytes);
    }
}
