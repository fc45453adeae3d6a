package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SessionVerifier;
import javax.ws.rs.core.Cookie;
import javax.ws.rs.core.HttpHeaders;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Who is signed in on the OAuth server's own pages ({@code /oauth/authorize}, {@code /oauth/device}), which sit outside
 * the kernel's JAX-RS gate because the token endpoint takes HTTP Basic: the browser session, or a personal access
 * token with {@code *}. OAuth access tokens never approve other clients.
 */
@Component(service = Signin.class)
public class Signin {

    private final Authenticator authenticator;

    @Activate
    public Signin(@Reference Authenticator authenticator) {
        this.authenticator = authenticator;
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
            // the kernel verifies the session and makes its caller
            try {
                return authenticator.authenticateReading(null, SessionVerifier.COOKIE + "=" + cookie.getValue());
            } catch (ApiException endedOrSuspended) {
                return null;
            }
        }
        return null;
    }

    /** The browser session of an HTML form's POST whose field {@code csrf_token} is the session's, or null. */
    Caller formUser(HttpHeaders headers, String csrfToken) {
        try {
            return authenticator.authenticateSessionForm(headers.getHeaderString(HttpHeaders.COOKIE), csrfToken);
        } catch (ApiException suspended) {
            return null;
        }
    }

    /** 403 unless the caller is a browser session or a personal access token with every scope. */
    static void requireFullAccess(Caller caller) {
        if ("oauth".equals(caller.authMethod()) || !caller.hasScope(Caller.ALL_SCOPES)) {
            throw ApiException.forbidden("this needs a signed-in session or a personal access token with scope *");
        }
    }
}
