package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Verifies bearer tokens of one kind that a capability issues (OAuth access tokens {@code ato_…}, say). The
 * kernel consults the verifier whose {@link #prefix()} starts the presented token; the kernel itself verifies
 * personal access tokens ({@code atp_…}) and the operator token.
 */
@ConsumerType
public interface TokenVerifier {

    /** The prefix that marks this verifier's tokens, including its underscore, e.g. {@code ato_}. */
    String prefix();

    /**
     * @return the caller the token stands for, or {@code null} when the token is unknown, expired or revoked
     * @throws ApiException 403 when the token is valid but its Principal is suspended
     */
    Caller verify(String token);
}
