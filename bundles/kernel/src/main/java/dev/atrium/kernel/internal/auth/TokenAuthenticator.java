package dev.atrium.kernel.internal.auth;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.TokenVerifier;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens.Suspended;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens.Valid;

/** Verifies Principal tokens: personal access tokens here, other prefixes through {@link TokenVerifier}s. */
@Component(service = { Authenticator.class, TokenAuthenticator.class })
public class TokenAuthenticator implements Authenticator {

    private final PersonalAccessTokens tokens;
    private final List<TokenVerifier> verifiers = new CopyOnWriteArrayList<>();

    @Activate
    public TokenAuthenticator(@Reference PersonalAccessTokens tokens) {
        this.tokens = tokens;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addVerifier(TokenVerifier verifier) {
        verifiers.add(verifier);
    }

    void removeVerifier(TokenVerifier verifier) {
        verifiers.remove(verifier);
    }

    @Override
    public Caller authenticate(String secret) {
        if (secret == null || secret.isBlank()) {
            throw ApiException.unauthorized("authentication required");
        }
        if (secret.startsWith(PersonalAccessTokens.PREFIX + "_")) {
            PersonalAccessTokens.Outcome outcome = tokens.authenticate(secret);
            if (outcome instanceof Valid v) {
                return v.caller();
            }
            if (outcome instanceof Suspended) {
                throw ApiException.forbidden("this Principal is suspended");
            }
        } else {
            for (TokenVerifier verifier : verifiers) {
                if (secret.startsWith(verifier.prefix())) {
                    Caller caller = verifier.verify(secret);
                    if (caller != null && caller.principalId() != null) {
                        return caller;
                    }
                    break;
                }
            }
        }
        throw ApiException.unauthorized("the token is invalid, expired or revoked");
    }
}
