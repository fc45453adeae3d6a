package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.EdgeHandler;
import dev.atrium.kernel.api.HostRouter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Answers the ACME HTTP-01 challenges of the orders {@link Certificates} has under way:
 * {@code GET http://<domain>/.well-known/acme-challenge/<token>} is the key authorization while that token is pending for
 * that domain. The pending tokens are rows, so whichever instance the ACME server reaches answers. It is one of the
 * kernel's edge handlers, so it answers before the kernel's envelope, which hands host-routed requests to Host routing:
 * a verified domain otherwise routes to its service. Any other path, token or Host goes on unchanged (to the service or
 * the API).
 */
@Component(service = {Request.Handler.class, AcmeChallenges.class})
@EdgeHandler("services.domains.acme-challenges")
public class AcmeChallenges implements Request.Handler {

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
    public boolean handle(Request request, Response response, Callback callback) {
        String path = request.getHttpURI().getPath();
        if (path == null || !path.startsWith(PATH) || !HttpMethod.GET.is(request.getMethod())) {
            return false;
        }
        Pending p = pending(path.substring(PATH.length()));
        if (p == null
                || !p.domain()
                        .equals(HostRouter.Claims.host(request.getHeaders().get(HttpHeader.HOST)))) {
            return false;
        }
        byte[] body = p.keyAuthorization().getBytes(StandardCharsets.US_ASCII);
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }
}
