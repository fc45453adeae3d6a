package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.TokenVerifier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Lets OAuth access tokens ({@code ato_…}) authenticate {@code /api} calls: the kernel checks the Principal, makes the
 * caller (auth method {@code oauth}, only the granted scopes, never {@code *}) and limits it to those scopes with its
 * usual check. A client-credentials token of a client nobody owns has no Principal and authenticates nothing under
 * {@code /api}.
 */
@Component(service = TokenVerifier.class)
public class AccessTokenVerifier implements TokenVerifier {

    static final String AUTH_METHOD = "oauth";

    private final OAuthServer server;

    @Activate
    public AccessTokenVerifier(@Reference OAuthServer server) {
        this.server = server;
    }

    @Override
    public String prefix() {
        return "ato_";
    }

    @Override
    public Verified verify(String token) {
        IssuedTokens.Bearer bearer = server.bearer(token).orElse(null);
        if (bearer == null || bearer.principalId() == null) {
            return null;
        }
        return new Verified(bearer.principalId(), AUTH_METHOD, bearer.scopes(), bearer.clientId(), bearer.expiresAt());
    }
}
