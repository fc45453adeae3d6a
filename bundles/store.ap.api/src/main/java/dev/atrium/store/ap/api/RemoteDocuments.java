package dev.atrium.store.ap.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Fetches documents of other servers: every request and every redirect (at most five) passes the kernel's egress
 * guard, and the connection goes to the address the guard approved. Answers are bounded in size and time.
 */
@ProviderType
public interface RemoteDocuments {

    /** Largest document read, in bytes. */
    int MAX_BYTES = 1 << 20;

    /**
     * GETs an ActivityPub document ({@link ActivityMedia#ACCEPT}), optionally signed by a local actor (servers in
     * authorized-fetch mode ask for that).
     *
     * @param signAs a local actor's URI, or null to fetch unsigned
     * @throws RemoteException when the guard refuses, the peer fails, or the answer is not a JSON object of an ActivityPub
     *                         (or JRD) type within the bounds
     */
    JsonNode fetch(URI uri, String signAs) throws RemoteException;

    /** As {@link #fetch} for a WebFinger JRD ({@code application/jrd+json} or JSON). */
    JsonNode fetchJrd(URI uri) throws RemoteException;

    /**
     * A fetch that failed. {@link #status()} is what a route should answer: 400 when the address is refused, 502 when the
     * peer failed or sent something unusable, 504 when it took too long.
     */
    final class RemoteException extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        public RemoteException(int status, String message, Throwable cause) {
            super(message, cause);
            this.status = status;
        }

        public int status() {
            return status;
        }
    }
}
