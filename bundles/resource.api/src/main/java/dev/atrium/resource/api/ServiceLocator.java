package dev.atrium.resource.api;

import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Which workspace a service belongs to, for the resources core to check a service id that arrives in a request
 * ({@code POST /api/resources/:id/bind}, {@code DELETE /api/resources/:id/bind/:serviceId}) with the kernel's owner
 * scope before it stores or removes a binding: the core keeps no services of its own. Implemented by the capability
 * that keeps services, as a whiteboard service; while none is registered there is no service to bind to.
 *
 * @since 1.4
 */
@ConsumerType
public interface ServiceLocator {

    /**
     * The id of the workspace that owns service {@code serviceId}; empty when there is no such service. Proves nothing
     * about a caller: the core asks the kernel's owner scope about the workspace.
     */
    Optional<String> workspaceOf(String serviceId);
}
