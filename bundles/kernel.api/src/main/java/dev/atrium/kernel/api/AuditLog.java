package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The operator's audit log ({@code GET /admin/audit}): what the operator did to users, features and bundles, and who
 * signed in. An entry holds names and short facts, never a secret (no token, password or cookie).
 *
 * @since 2.17
 */
@ProviderType
public interface AuditLog {

    /** The actor of everything done with the operator token (the operator is not a Principal). */
    String OPERATOR = "operator";

    /**
     * Records that {@code actor} did {@code action} (a snake_case verb such as {@code feature_enabled}) to
     * {@code target} (a username, a feature's or a bundle's name; null when there is none), with a short
     * {@code detail} (null for none). Never fails its caller: an entry that cannot be written is logged and dropped.
     */
    void record(String actor, String action, String target, String detail);

    /**
     * Records a sign-in of Principal {@code principalId} through {@code provider} ({@code local} or an identity
     * provider's name) and remembers it as the Principal's last sign-in.
     */
    void signedIn(String principalId, String provider);
}
