package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.PrincipalCredentials;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** A Principal's OAuth access and refresh tokens, for the operator's revoke-tokens. */
@Component(service = PrincipalCredentials.class)
public class OAuthTokenCredentials implements PrincipalCredentials {

    private final IssuedTokens tokens;

    @Activate
    public OAuthTokenCredentials(@Reference IssuedTokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public String kind() {
        return "oauth_tokens";
    }

    @Override
    public int revokeAll(String principalId) {
        return tokens.revokeAllOf(principalId);
    }
}
