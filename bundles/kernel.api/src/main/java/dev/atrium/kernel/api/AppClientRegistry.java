package dev.atrium.kernel.api;

import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * OAuth clients that a deployed app owns, registered by the app platform from its manifest's {@code spec.oauth} on
 * behalf of the app's owner. The OAuth capability implements it with the same checks as its registration endpoint;
 * the clients are confidential, owned by {@code ownerPrincipalId} and listed among that Principal's clients.
 *
 * @since 2.15
 */
@ProviderType
public interface AppClientRegistry {

    /** What a manifest asks for: names, redirect URIs and scopes as {@code spec.oauth} gives them. */
    record Spec(
            String clientName,
            List<String> redirectUris,
            List<String> scopes,
            String logoUri,
            String tosUri,
            String policyUri) {
        public Spec {
            redirectUris = redirectUris == null ? List.of() : List.copyOf(redirectUris);
            scopes = scopes == null ? List.of() : List.copyOf(scopes);
        }
    }

    /** A registered client as stored: {@code secret} only when this call issued one, else null. */
    record Registered(String clientId, String secret, Spec spec) {}

    /** A client spec the OAuth capability refuses (a redirect URI it never accepts, an unknown scope): for the client. */
    final class Invalid extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Invalid(String message) {
            super(message);
        }
    }

    /**
     * Registers a new confidential client of {@code ownerPrincipalId} with the authorization-code and refresh-token
     * grants; the secret is in the answer, once.
     *
     * @throws Invalid when the spec is refused
     */
    Registered register(String ownerPrincipalId, Spec spec);

    /**
     * Replaces the names, redirect URIs, scopes and links of a client of {@code ownerPrincipalId}; its secret stays.
     *
     * @return empty when no such client of that Principal exists
     * @throws Invalid when the spec is refused
     */
    Optional<Registered> update(String ownerPrincipalId, String clientId, Spec spec);

    /**
     * Issues a new secret for a client of {@code ownerPrincipalId}. The previous secret keeps authenticating the client
     * for {@code grace} (so that an app rolls the new one out without a failed token request), then stops.
     *
     * @return empty when no such client of that Principal exists
     */
    Optional<Registered> rotateSecret(String ownerPrincipalId, String clientId, java.time.Duration grace);

    /** Deletes a client of {@code ownerPrincipalId} and revokes its tokens; whether it was there. */
    boolean delete(String ownerPrincipalId, String clientId);
}
