package dev.atrium.services.domains.internal;

import dev.atrium.services.api.ServiceRoutes;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import org.apache.felix.http.jetty.ConnectorFactory;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The services' HTTPS listener, added to Felix's Jetty through its whiteboard {@link ConnectorFactory}: a TLS connector
 * (HTTP/1.1) on the HTTP listener's address whose certificate is chosen per handshake by SNI ({@link SniKeyManager}).
 * Requests on it go through the same servlet whiteboard as those on the HTTP port, with {@code isSecure()} true and the
 * SNI name in the request attribute {@link ServiceRoutes#SNI_ATTRIBUTE}, so Host routing routes them. Its HTTP settings
 * are a copy of the HTTP listener's. Jetty's own SNI-Host check is off: Host routing answers a mismatch with the
 * spec's body (421). Felix stops the connector, and so closes the port, when this service is unregistered.
 *
 * <p>When a certificate stops being served or is replaced, the connector's {@code SSLContext} is replaced by a new one
 * ({@link SslContextFactory#reload}): sessions made before cannot be resumed, so the new certificate, or none, is what
 * the next connection for that name gets. Connections already open go on.
 */
final class HttpsConnectorFactory implements ConnectorFactory {

    static final String NAME = "atrium-services-https";

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HttpsConnectorFactory.class);

    private final String host;
    private final int port;
    private final SniKeyManager keys;
    private final Runnable renew = this::newContext;
    private volatile Connector last;
    private volatile SslContextFactory.Server factory;

    HttpsConnectorFactory(String host, int port, SniKeyManager keys) throws java.security.GeneralSecurityException {
        this.host = host;
        this.port = port;
        this.keys = keys;
        context(keys); // TLS is there, or this fails now rather than in Felix's hands
        keys.onWithdrawn(renew);
    }

    /** No more new contexts: the connector is going. */
    void close() {
        keys.removeOnWithdrawn(renew);
    }

    private static SSLContext context(SniKeyManager keys) throws java.security.GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[] {keys}, null, null);
        return context;
    }

    private void newContext() {
        SslContextFactory.Server f = factory;
        if (f == null) {
            return;
        }
        try {
            SSLContext fresh = context(keys);
            f.reload(x -> x.setSslContext(fresh));
            LOG.info(
                    "services: the HTTPS listener took a new TLS context: a certificate was replaced or is no longer served");
        } catch (Exception e) {
            LOG.warn("services: the HTTPS listener's TLS sessions could not be renewed: {}", e.toString());
        }
    }

    /** The connector made last, or null before Felix asked for one. */
    Connector last() {
        return last;
    }

    @Override
    public Connector createConnector(Server server) {
        SslContextFactory.Server tls = new SslContextFactory.Server();
        try {
            tls.setSslContext(context(keys));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("TLS is not available", e);
        }
        tls.setSniRequired(false);
        factory = tls;
        HttpConfiguration base = null;
        for (Connector c : server.getConnectors()) {
            HttpConnectionFactory f = c.getConnectionFactory(HttpConnectionFactory.class);
            if (f != null && !NAME.equals(c.getName())) {
                base = f.getHttpConfiguration();
                break;
            }
        }
        HttpConfiguration http = base == null ? new HttpConfiguration() : new HttpConfiguration(base);
        http.setSecureScheme("https");
        http.setSecurePort(port);
        SecureRequestCustomizer secure = new SecureRequestCustomizer();
        secure.setSniHostCheck(false);
        secure.setSniRequired(false);
        List<HttpConfiguration.Customizer> customizers = new ArrayList<>();
        customizers.add(HttpsConnectorFactory::markSni);
        customizers.add(secure);
        customizers.addAll(http.getCustomizers());
        http.setCustomizers(customizers);
        ServerConnector connector =
                new ServerConnector(server, new SslConnectionFactory(tls, "http/1.1"), new HttpConnectionFactory(http));
        connector.setName(NAME);
        connector.setHost(host);
        connector.setPort(port);
        last = connector;
        return connector;
    }

    /** Every request on this connector carries the SNI name of its connection ("" when the client sent none). */
    private static Request markSni(Request request, org.eclipse.jetty.http.HttpFields.Mutable responseHeaders) {
        EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
        EndPoint.SslSessionData data = endPoint == null ? null : endPoint.getSslSessionData();
        SSLSession session = data == null ? null : data.sslSession();
        String name = session == null ? null : SniKeyManager.requestedName(session);
        request.setAttribute(ServiceRoutes.SNI_ATTRIBUTE, name == null ? "" : name);
        return request;
    }
}
