package dev.atrium.services.internal;

import dev.atrium.resource.api.ServiceLocator;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Tells the resources core which workspace a service is in, so that {@code POST /api/resources/:id/bind} binds only a
 * service the kernel proves the caller owns (the core asks the owner scope; this only reads the row).
 */
@Component(service = ServiceLocator.class)
public class ServiceWorkspaces implements ServiceLocator {

    private final ServiceStore store;

    @Activate
    public ServiceWorkspaces(@Reference ServiceStore store) {
        this.store = store;
    }

    @Override
    public Optional<String> workspaceOf(String serviceId) {
        return store.service(serviceId).map(ServiceStore.Service::spaceId);
    }
}
