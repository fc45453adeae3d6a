package dev.atrium.identity.internal;

import dev.atrium.kernel.api.PrincipalCredentials;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** A Principal's browser sessions, for the operator's revoke-tokens. */
@Component(service = PrincipalCredentials.class)
public class SessionCredentials implements PrincipalCredentials {

    private final IdentityService identity;

    @Activate
    public SessionCredentials(@Reference IdentityService identity) {
        this.identity = identity;
    }

    @Override
    public String kind() {
        return "sessions";
    }

    @Override
    public int revokeAll(String principalId) {
        return identity.endSessionsOf(principalId);
    }
}
