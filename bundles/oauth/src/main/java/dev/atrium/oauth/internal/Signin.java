package dev.atrium.oauth.internal;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.ws.rs.core.Cookie;
import javax.ws.rs.core.HttpHeaders;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SessionVerifier;

/**
 * Who is signed in on the OAuth server's own pages ({@code /oauth/authorize}, {@code /oauth/device}), which sit outside
 * the kernel's JAX-RS gate because the token endpoint takes HTTP Basic: the browser session, or a personal access
 * token with {@code *}. OAuth access tokens never approve other clients.
 */
@Component(service = Signin.class)
public class Signin {

    private final Authenticator authenticator;
    private final List<SessionVerifier> sessions = new CopyOnWriteArrayList<>();

    @Activate
    public Signin(@Reference Authenticator authenticator) {
        this.authenticator = authenticator;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addSession(SessionVerifier v) {
        sessions.add(v);
    }

    void removeSession(SessionVerifier v) {
        sessions.remove(v);
    }

    /** The signed-in user, or null. */
    Caller user(HttpHeaders headers) {
        String authorization = headers.getHeaderString(HttpHeaders.AUTHORIZATION);
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            try {
                Caller c = authenticator.authenticate(authorization.substring(7).trim());
                return c.hasScope(Caller.ALL_SCOPES) ? c : null;
            } catch (ApiException e) {
                return null;
            }
        }
        Cookie cookie = headers.getCookies().get(SessionVerifier.COOKIE);
        if (cookie != null) {
            for (SessionVerifier v : sessions) {
                SessionVerifier.Session s;
                try {
                    s = v.verify(cookie.getValue());
                } catch (ApiException suspended) {
                    return null;
                }
                if (s != null && s.caller() != null && s.caller().principalId() != null) {
                    return s.caller();
                }
            }
        }
        return null;
    }

    /** 403 unless the caller is a browser session or a personal access token with every scope. */
    static void requireFullAccess(Caller caller) {
        if ("oauth".equals(caller.authMethod()) || !caller.hasScope(Caller.ALL_SCOPES)) {
            throw ApiException.forbidden("this needs a signed-in session or a personal access token with scope *");
        }
    }
}
