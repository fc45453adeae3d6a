package dev.atrium.identity.internal;

import dev.atrium.kernel.api.SessionVerifier;
import java.io.IOException;
import java.io.InputStream;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.Cookie;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;

/**
 * The page a person lands on after signing in, at {@code /}: who they are, their workspaces, their personal access
 * tokens (create, copy once, revoke) and the applications they authorized. A static page and its script; the data
 * comes from the API with the browser session (and its CSRF token for changes). Without a session, {@code /} sends
 * the browser to sign in. A whiteboard filter that serves exactly these two paths and passes every other request on:
 * the JAX-RS whiteboard's servlet takes every path ({@code /*}) before a servlet for the root could (nor does a filter
 * regex for the root match there), and the API's own 404 stays for every other unknown path. It passes asynchronous
 * requests (event streams) on like the kernel's filters.
 */
// the route catalog (and so the route sweep) lists the two paths this filter serves
@Component(
        service = Filter.class,
        property = {"atrium.routes=/", "atrium.routes=/account.js"})
@HttpWhiteboardFilterPattern("/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=default)")
public class AccountPage implements Filter {

    private final IdentityService identity;

    @Activate
    public AccountPage(@Reference IdentityService identity) {
        this.identity = identity;
    }

    @Override
    public void init(javax.servlet.FilterConfig config) {
        // nothing to set up
    }

    @Override
    public void destroy() {
        // nothing held
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse resp = (HttpServletResponse) response;
        String path = req.getRequestURI();
        if ((!"GET".equals(req.getMethod()) && !"HEAD".equals(req.getMethod()))
                || !("/".equals(path) || "/account.js".equals(path))) {
            chain.doFilter(request, response);
            return;
        }
        boolean script = "/account.js".equals(path);
        if (!script && identity.live(sessionCookie(req)).isEmpty()) {
            resp.setStatus(302);
            resp.setHeader("Location", "/auth/login?return_to=%2F");
            resp.setHeader("Cache-Control", "no-store");
            return;
        }
        resp.setContentType(script ? "text/javascript;charset=utf-8" : "text/html;charset=utf-8");
        resp.setHeader("Cache-Control", "no-store");
        resp.setHeader(
                "Content-Security-Policy",
                "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
        resp.setHeader("X-Content-Type-Options", "nosniff");
        resp.setHeader("Referrer-Policy", "no-referrer");
        try (InputStream in =
                AccountPage.class.getResourceAsStream(script ? "/account/account.js" : "/account/index.html")) {
            in.transferTo(resp.getOutputStream());
        }
    }

    private static String sessionCookie(HttpServletRequest req) {
        Cookie[] cookies = req.getCookies();
        if (cookies != null) {
            for (Cookie c : cookies) {
                if (SessionVerifier.COOKIE.equals(c.getName())) {
                    return c.getValue();
                }
            }
        }
        return null;
    }
}
