package dev.atrium.resource.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Told by the resources core when the bindings of a service changed outside {@link ResourceDirectory#replaceBindings}
 * (a {@code POST /api/resources/:id/bind}, an unbind, a deleted resource or grant), so that the services capability can
 * give its running code the new set. A whiteboard service; called after the change committed, on the request's thread.
 */
@ConsumerType
public interface BindingListener {

    void bindingsChanged(String serviceId);
}
