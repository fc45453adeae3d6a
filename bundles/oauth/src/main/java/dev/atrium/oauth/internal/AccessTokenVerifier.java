package dev.atrium.oauth.internal;

import java.util.Set;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.TokenVerifier;

/**
 * Lets OAuth access tokens ({@code ato_…}) authenticate {@code /api} calls: the kernel then limits them to the
 * token's scopes with its usual check. A client-credentials token of a client nobody owns has no Principal and
 * authenticates nothing under {@code /api}.
 */
@Component(service = TokenVerifier.class)
public class AccessTokenVerifier implements TokenVerifier {

    private final OAuthServer server;
    private final PrincipalDirectory principals;

    @Activate
    public AccessTokenVerifier(@Reference OAuthServer server, @Reference PrincipalDirectory principals) {
        this.server = server;
        this.principals = principals;
    }

    @Override
    public String prefix() {
        return "ato_";
    }

    @Override
    public Caller verify(String token) {
        IssuedTokens.Bearer bearer = server.bearer(token).orElse(null);
        if (bearer == null || bearer.principalId() == null) {
            return null;
        }
        PrincipalDirectory.Entry p = principals.get(bearer.principalId()).orElse(null);
        if (p == null) {
            return null;
        }
        if (!p.active()) {
            throw ApiException.forbidden("this Principal is suspended");
        }
        return new OAuthCaller(bearer.principalId(), bearer.clientId(), bearer.scopes());
    }

    /** The caller of an OAuth access token: never {@code *}, only the granted scopes. */
    record OAuthCaller(String principalId, String clientId, Set<String> scopes) implements Caller {
        @Override
        public String authMethod() {
            return "oauth";
        }

        @Override
        public boolean hasScope(String scope) {
            return scopes.contains(scope);
        }

        @Override
        public String getName() {
            return principalId;
        }
    }
}
