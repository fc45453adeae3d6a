package dev.atrium.store.ap.api;

import java.net.URI;
import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * HTTP Signatures as ActivityPub servers exchange them (draft-cavage-http-signatures-12, the variant Mastodon and Fedify
 * interoperate on): {@code rsa-sha256} or {@code hs2019} over {@code (request-target) host date} and, with a body,
 * {@code digest} ({@code SHA-256=<base64>}).
 */
@ProviderType
public interface HttpSignatures {

    /** How far a request's {@code Date} may be from now, either way. */
    long MAX_SKEW_SECONDS = 300;

    /**
     * The headers that sign a request by {@code actorUri}: {@code Host}, {@code Date}, {@code Digest} (when there is a
     * body) and {@code Signature}.
     *
     * @param body the exact bytes to be sent, or null for none
     */
    Map<String, String> sign(String actorUri, String method, URI target, byte[] body);

    /**
     * Verifies a received request: the {@code Signature} header, the {@code Date} (present, within {@link #MAX_SKEW_SECONDS}),
     * the {@code Digest} against the body, and the signature against the key named by {@code keyId}, fetched (through the
     * egress guard) with its owner.
     *
     * @param pathAndQuery the request target as received ({@code /ap/stores/s/inbox})
     * @param headers      the request's headers, names in any case
     * @param body         the exact bytes received, or null
     * @return who signed it
     * @throws SignatureRefused with the status to answer: 400 for a missing {@code Date} or a wrong {@code Digest}, 401 for
     *                          a missing, malformed or wrong signature or a {@code Date} too far off
     */
    Signer verify(String method, String pathAndQuery, Map<String, List<String>> headers, byte[] body)
            throws SignatureRefused;

    /**
     * Who signed a request.
     *
     * @param keyId the key the signature names
     * @param owner the actor that owns the key (its {@code owner}, else the document it was found in), on the key's origin
     *              and confirmed by that actor's own document listing the key
     */
    record Signer(String keyId, String owner) {}

    /** A signature that does not hold; {@link #status()} is the HTTP status to answer, the message says why. */
    final class SignatureRefused extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        public SignatureRefused(int status, String message) {
            super(message);
            this.status = status;
        }

        public int status() {
            return status;
        }
    }
}
