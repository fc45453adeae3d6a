package dev.atrium.services.domains.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;

/**
 * Answers the ACME HTTP-01 challenges of the orders {@link Certificates} has under way:
 * {@code GET http://<domain>/.well-known/acme-challenge/<token>} is the key authorization while that token is pending for
 * that domain. The pending tokens are rows, so whichever instance the ACME server reaches answers. It runs before the kernel's envelope, which hands host-routed requests to Host routing, because a verified domain otherwise routes to its
 * service; only this path reaches it, and any other token or Host goes on unchanged (to the service or the API).
 */
@Component(
        service = {Filter.class, AcmeChallenges.class},
        property = "service.ranking:Integer=1100")
@HttpWhiteboardFilterPattern(AcmeChallenges.PATH + "*")
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class AcmeChallenges implements Filter {

    static final String PATH = "/.well-known/acme-challenge/";

    private record Pending(String domain, String keyAuthorization) {}

    private final CertificateTables store;

    @Activate
    public AcmeChallenges(@Reference CertificateTables store) {
        this.store = store;
    }

    void put(String token, String domain, String keyAuthorization) {
        store.sql()
                .update(
                        "INSERT INTO service_acme_challenges (token, domain, key_authorization) VALUES (?, ?, ?) "
                                + "ON CONFLICT (token) DO UPDATE SET domain = EXCLUDED.domain, key_authorization = EXCLUDED.key_authorization",
                        token,
                        domain,
                        keyAuthorization);
    }

    void remove(String token) {
        // and any left behind by an instance that stopped mid-order
        store.sql()
                .update(
                        "DELETE FROM service_acme_challenges WHERE token = ? OR created_at < now() - interval '1 hour'",
                        token);
    }

    private Pending pending(String token) {
        if (token.isEmpty() || token.length() > 200) {
            return null;
        }
        return store.sql()
                .one(
                        "SELECT domain, key_authorization FROM service_acme_challenges WHERE token = ?",
                        rs -> new Pending(rs.getString(1), rs.getString(2)),
                        token)
                .orElse(null);
    }

    @Override
    public void init(javax.servlet.FilterConfig config) {
        // nothing to configure
    }

    @Override
    public void destroy() {
        // the rows go when their orders end
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        String uri = request.getRequestURI();
        Pending p = uri.startsWith(PATH) && "GET".equals(request.getMethod())
                ? pending(uri.substring(PATH.length()))
                : null;
        if (p == null || !p.domain().equals(dev.atrium.kernel.api.HostRouter.Claims.host(request.getHeader("Host")))) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        response.setStatus(200);
        response.setContentType("text/plain");
        byte[] body = p.keyAuthorization().getBytes(StandardCharsets.US_ASCII);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
