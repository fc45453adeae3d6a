package dev.atrium.kernel.internal.http;

import javax.ws.rs.container.ContainerRequestContext;
import javax.ws.rs.container.ContainerRequestFilter;
import javax.ws.rs.container.PreMatching;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtension;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsName;

/**
 * Names the JAX-RS application's bus to {@link ApplicationRebuilds} from inside a request. Pre-matching, so that every
 * request the application sees counts, the readiness probes' {@code OPTIONS} included: the bus is known before the
 * server first says it is ready.
 */
@Component(service = ContainerRequestFilter.class)
@JaxrsExtension
@JaxrsName("atrium.rebuild.watch")
@PreMatching
public class RebuildWatch implements ContainerRequestFilter {

    private final ApplicationRebuilds rebuilds;

    @Activate
    public RebuildWatch(@Reference ApplicationRebuilds rebuilds) {
        this.rebuilds = rebuilds;
    }

    @Override
    public void filter(ContainerRequestContext request) {
        rebuilds.watchCurrentApplication();
    }
}
