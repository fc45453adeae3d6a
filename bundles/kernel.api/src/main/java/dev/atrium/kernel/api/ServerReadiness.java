package dev.atrium.kernel.api;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Whether the server serves everything it should: every Atrium bundle meant to run is active, its components
 * satisfied, its JAX-RS resources served and the whiteboard settled. {@code /healthz} answers from it.
 */
@ProviderType
public interface ServerReadiness {

    /** What is not ready yet, one line each; empty when everything is. */
    List<String> notReady();

    /**
     * Whether the kernel is holding API requests while a capability changes (its update gate is closed). A change is
     * over for clients only once it opened: whoever makes changes one after another waits for it, so held requests
     * flow between two changes.
     */
    boolean holdsRequests();
}
