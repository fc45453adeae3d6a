package dev.atrium.resources.internal;

import dev.atrium.kernel.api.Caller;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceRequests;
import java.security.Principal;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The core's check for a provider's own routes: the same authorisation as the core's data routes ({@link Authz}). */
@Component(service = ResourceRequests.class)
public class ResourceRequestsGate implements ResourceRequests {

    private final Authz authz;
    private final Providers providers;
    private final Runtime runtime;

    @Activate
    public ResourceRequestsGate(@Reference Authz authz, @Reference Providers providers, @Reference Runtime runtime) {
        this.authz = authz;
        this.providers = providers;
        this.runtime = runtime;
    }

    @Override
    public ResourceContext open(Principal caller, String resourceToken, String resourceId, String type, Access needed) {
        Authz.Granted g =
                authz.authorize(caller instanceof Caller c ? c : null, resourceToken, resourceId, null, needed, type);
        providers.require(g.row().type, g.row().backend); // 503 while its provider is away
        return runtime.context(g.row(), g.access());
    }
}
