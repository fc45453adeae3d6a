package dev.atrium.store.ap.api;

import java.time.Instant;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A key pair per local actor (a store, a repository), RSA 2048, kept in the database. The actor document publishes
 * {@link ActorKey#publicKeyPem()} under {@link ActorKey#keyId()}; {@link HttpSignatures#sign} signs with the private half.
 */
@ProviderType
public interface ActorKeys {

    /** The actor's current key, made on first use. */
    ActorKey keyOf(String actorUri);

    /** A new key for the actor; the old one no longer signs (peers fetch the new one when a signature fails). */
    ActorKey rotate(String actorUri);

    /**
     * A public key.
     *
     * @param keyId        {@code <actorUri>#main-key}, or {@code <actorUri>/main-key} for a canonical repository
     *                     ({@code /ap/repos/…}), whose document serves the key alone (a {@code CryptographicKey})
     * @param actorUri     the actor it belongs to (the key's {@code owner})
     * @param publicKeyPem SubjectPublicKeyInfo in PEM
     * @param createdAt    when it was made
     */
    record ActorKey(String keyId, String actorUri, String publicKeyPem, Instant createdAt) {}
}
