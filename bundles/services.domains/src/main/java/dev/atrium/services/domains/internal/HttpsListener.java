package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.HostRouter;
import dev.atrium.services.api.ServiceRoutes;
import java.util.Dictionary;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns on the HTTPS listener of custom domains when {@code httpsPort} is set: registers {@link HttpsConnectorFactory} as a
 * Felix Jetty {@code ConnectorFactory} service, which Felix's Jetty turns into a connector at once and stops (closing the
 * port) when the service goes, i.e. when this capability stops, is updated or disabled. The address is the HTTP
 * listener's ({@code org.apache.felix.http.host}; all interfaces when unset). Without Felix's Jetty in the runtime (the
 * package is an optional import) the listener is off and says so.
 */
@Component(immediate = true, configurationPid = DomainsConfig.PID)
public class HttpsListener {

    private static final Logger LOG = LoggerFactory.getLogger(HttpsListener.class);

    private final ServiceRegistration<?> registration;
    private HttpsConnectorFactory connector;

    /**
     * @param hostRouter not used, but required: the port opens only while Host routing filters every request on it,
     *                   so the API never answers under a custom domain's certificate
     */
    @Activate
    public HttpsListener(
            DomainsConfig config,
            @Reference Certificates certificates,
            @Reference(target = "(" + ServiceRoutes.HOST_ROUTER_PROPERTY + "=true)") HostRouter hostRouter,
            BundleContext context) {
        int port = config.httpsPort();
        this.registration = port > 0 ? register(context, port, certificates.keyManager()) : null;
    }

    private ServiceRegistration<?> register(BundleContext context, int port, SniKeyManager keys) {
        String host = context.getProperty("org.apache.felix.http.host");
        host = host == null || host.isBlank() ? null : host.trim();
        try {
            HttpsConnectorFactory factory = new HttpsConnectorFactory(host, port, keys);
            connector = factory;
            Dictionary<String, Object> props = FrameworkUtil.asDictionary(Map.of("atrium.services.https.port", port));
            ServiceRegistration<?> r = context.registerService(
                    org.apache.felix.http.jetty.ConnectorFactory.class.getName(), factory, props);
            // Felix's Jetty (when started) made and started the connector while the service was registered
            var c = factory.last();
            if (c != null && c.isStarted()) {
                LOG.info("services: HTTPS for custom domains on {}:{}", host == null ? "*" : host, port);
            } else if (c != null) {
                LOG.warn(
                        "services: the HTTPS listener on {}:{} did not start (is the port taken?); see Felix Jetty's log",
                        host == null ? "*" : host,
                        port);
            }
            return r;
        } catch (LinkageError missing) {
            LOG.warn(
                    "services: no HTTPS listener; Felix's Jetty (org.apache.felix.http.jetty) is not in the runtime: {}",
                    missing.toString());
            return null;
        } catch (java.security.GeneralSecurityException e) {
            LOG.warn("services: no HTTPS listener; TLS is not available: {}", e.toString());
            return null;
        }
    }

    @Deactivate
    void deactivate() {
        if (registration != null) {
            try {
                registration.unregister();
            } catch (IllegalStateException gone) {
                // the bundle is stopping: the framework unregistered it already
            }
        }
        if (connector != null) {
            connector.close();
        }
    }
}
