package dev.atrium.kernel.internal.http;

import javax.annotation.Priority;
import javax.ws.rs.container.ContainerRequestContext;
import javax.ws.rs.container.ContainerRequestFilter;
import javax.ws.rs.container.PreMatching;
import org.apache.cxf.jaxrs.JAXRSServiceImpl;
import org.apache.cxf.jaxrs.utils.HttpUtils;
import org.apache.cxf.message.Exchange;
import org.apache.cxf.message.Message;
import org.apache.cxf.phase.PhaseInterceptorChain;
import org.apache.cxf.service.Service;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtension;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsName;

/**
 * Shows CXF, for the request's resource matching, only the root resources its path can match
 * ({@link RootResourceIndex}). The last pre-matching filter, so that a filter that rewrites the path has done so.
 */
@Component(service = ContainerRequestFilter.class)
@JaxrsExtension
@JaxrsName("atrium.root.resources")
@PreMatching
@Priority(Integer.MAX_VALUE)
public class RootResourceSelection implements ContainerRequestFilter {

    @Override
    // the same service, not an equal one: a service is a map of its properties
    @SuppressWarnings("ReferenceEquality")
    public void filter(ContainerRequestContext request) {
        Message message = PhaseInterceptorChain.getCurrentMessage();
        Exchange exchange = message == null ? null : message.getExchange();
        if (exchange == null || !(exchange.getService() instanceof JAXRSServiceImpl service)) {
            return;
        }
        JAXRSServiceImpl selected = RootResourceIndex.of(service).serviceFor(HttpUtils.getPathToMatch(message, true));
        if (selected != service) {
            exchange.put(Service.class, selected);
        }
    }
}
