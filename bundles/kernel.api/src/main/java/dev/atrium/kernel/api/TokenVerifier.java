package dev.atrium.kernel.api;

import java.util.Set;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Verifies bearer tokens of one kind that a capability issues (OAuth access tokens {@code ato_…}, say). The
 * kernel consults the verifier whose {@link #prefix()} starts the presented token; the kernel itself verifies
 * personal access tokens ({@code atp_…}) and the operator token. A verifier says what the token proves; the kernel
 * checks the Principal and makes the {@link Caller}.
 */
@ConsumerType
public interface TokenVerifier {

    /** The prefix that marks this verifier's tokens, including its underscore, e.g. {@code ato_}. */
    String prefix();

    /**
     * What a token proves.
     *
     * @param principalId the Principal it stands for; null for a token of no Principal (it authenticates nothing)
     * @param authMethod  how the caller proved itself, e.g. {@code oauth}; never one the kernel owns ({@code pat},
     *                    {@code session}, {@code run}, {@code operator})
     * @param scopes      the granted scopes; {@link Caller#ALL_SCOPES} in it grants nothing: such a token reaches only
     *                    what its scopes name
     * @param clientId    the client the token was issued to, or null
     * @param expiresAt   when the token stops working, or null for never: the kernel keeps what a token proves no
     *                    longer than this (and, for a revocation, until the database says so)
     * @since 2.0
     */
    record Verified(
            String principalId, String authMethod, Set<String> scopes, String clientId, java.time.Instant expiresAt) {}

    /**
     *Returns what the token proves, or {@code null} when the token is unknown, expired or revoked; the kernel then
     * checks the Principal is active (403 when suspended).
     *
     */
    Verified verify(String token);
}
