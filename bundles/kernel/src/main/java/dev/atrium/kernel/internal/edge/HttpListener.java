package dev.atrium.kernel.internal.edge;

import java.util.ArrayList;
import java.util.List;
import org.apache.felix.http.jetty.ConnectorFactory;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's HTTP listener is the kernel's. Felix's Jetty makes a listener from its own settings and then asks every
 * {@link ConnectorFactory} for more; this one takes the place of Felix's: on the same address and with a copy of its HTTP
 * settings, it adds what Felix's lacks, a deadline for request headers ({@link HeaderDeadline}) and a slowest body rate
 * ({@link BodyRate}), and it makes the server's error handler the spec's ({@link SpecErrorHandler}), so that what Jetty
 * refuses before any filter is the spec's error body too. It puts the kernel's {@link Edge} in front of the servlet
 * whiteboard. {@link ServerStop} closes it when the server stops.
 *
 * <p>When the kernel is refreshed, Felix stops and drops this listener with the old service and asks the new one:
 * Felix's own listener is gone by then, so the address is kept as a server attribute.
 */
@Component(
        service = {ConnectorFactory.class, HttpListener.class},
        configurationPid = "dev.atrium.kernel.edge",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = HttpListener.Config.class)
public class HttpListener implements ConnectorFactory {

    @ObjectClassDefinition(name = "Atrium HTTP listener")
    public @interface Config {
        @AttributeDefinition(
                description = "Milliseconds a request's headers may take to arrive, from its first byte (from the "
                        + "connection's opening for its first request)")
        long headerTimeoutMillis() default 10_000;

        @AttributeDefinition(
                description = "Slowest average rate, in bytes per second, a request body may arrive at "
                        + "once its grace period is over; 0 turns the check off")
        long minBodyBytesPerSecond() default 1024;

        @AttributeDefinition(description = "Milliseconds from a body's first read before its rate is checked")
        long bodyRateGraceMillis() default 10_000;

        @AttributeDefinition(
                description = "When the server stops: longest time in milliseconds requests in flight may take to "
                        + "finish (new ones are answered 503) before the listeners close and cut what is left")
        long stopDrainMillis() default 4_000;
    }

    private static final Logger LOG = LoggerFactory.getLogger(HttpListener.class);

    /** Where the listener listens, kept on the server for the next kernel (host, or "" for every interface). */
    static final String HOST = "atrium.edge.host";

    static final String PORT = "atrium.edge.port";

    private final Config config;
    private final ServerStop stop;
    private final EdgeHandlers handlers;
    private volatile Installed installed;

    /** Where the edge went in: taken out again when this component goes, so no request meets a stopped kernel. */
    private record Installed(ContextHandlerCollection contexts, Handler servlets, Edge edge) {}

    @Activate
    public HttpListener(Config config, @Reference ServerStop stop, @Reference EdgeHandlers handlers) {
        this.config = config;
        this.stop = stop;
        this.handlers = handlers;
    }

    @Deactivate
    void deactivate() {
        Installed i = installed;
        installed = null;
        if (i != null) {
            i.edge().unmanage(i.servlets());
            i.contexts().setHandlers(i.servlets());
            i.contexts().manage(i.servlets());
        }
    }

    @Override
    public Connector createConnector(Server server) {
        ServerConnector felix = felixListener(server);
        String host;
        int port;
        HttpConfiguration http;
        int inputBuffer;
        long idle;
        int acceptors;
        int selectors;
        if (felix != null) {
            host = felix.getHost();
            port = felix.getLocalPort() > 0 ? felix.getLocalPort() : felix.getPort();
            HttpConnectionFactory factory = felix.getConnectionFactory(HttpConnectionFactory.class);
            http = new HttpConfiguration(factory.getHttpConfiguration());
            inputBuffer = factory.getInputBufferSize();
            idle = felix.getIdleTimeout();
            acceptors = felix.getAcceptors();
            selectors = felix.getSelectorManager().getSelectorCount();
            try {
                felix.stop();
            } catch (Exception e) {
                throw new IllegalStateException("Felix's HTTP listener did not stop: " + e, e);
            }
            server.removeConnector(felix);
        } else if (server.getAttribute(PORT) instanceof Integer kept) {
            // the kernel was refreshed: Felix's listener went with the first kernel's
            host = (String) server.getAttribute(HOST);
            host = host == null || host.isEmpty() ? null : host;
            port = kept;
            http = (HttpConfiguration) server.getAttribute(HttpConfiguration.class.getName());
            inputBuffer = (Integer) server.getAttribute("atrium.edge.inputBuffer");
            idle = (Long) server.getAttribute("atrium.edge.idle");
            acceptors = -1;
            selectors = -1;
        } else {
            throw new IllegalStateException("Felix's Jetty has no HTTP listener to take the place of");
        }
        server.setAttribute(HOST, host == null ? "" : host);
        server.setAttribute(PORT, port);
        server.setAttribute(HttpConfiguration.class.getName(), new HttpConfiguration(http));
        server.setAttribute("atrium.edge.inputBuffer", inputBuffer);
        server.setAttribute("atrium.edge.idle", idle);

        http.addCustomizer(new BodyRate(config.minBodyBytesPerSecond(), config.bodyRateGraceMillis()));
        HttpConnectionFactory factory = new HttpConnectionFactory(http);
        factory.setInputBufferSize(inputBuffer);
        ServerConnector listener = new ServerConnector(server, acceptors, selectors, factory);
        listener.setName("atrium-http");
        listener.setHost(host);
        listener.setPort(port);
        listener.setIdleTimeout(idle);
        listener.addBean(new HeaderDeadline(config.headerTimeoutMillis(), server.getScheduler()));
        server.setErrorHandler(new SpecErrorHandler());
        installEdge(server);
        stop.serving(server);
        LOG.info(
                "the kernel's HTTP listener takes {}:{} (request headers within {} ms, bodies at least {} B/s)",
                host == null ? "*" : host,
                port,
                config.headerTimeoutMillis(),
                config.minBodyBytesPerSecond());
        return listener;
    }

    /**
     * Puts the {@link Edge} between Felix's context collection and its servlet context. Felix's server is started by
     * now and is not a dynamic container, but its {@code ContextHandlerCollection} is: the servlet context moves into
     * the edge without being stopped (unmanaged while it moves, then the edge's to stop with the server).
     */
    private void installEdge(Server server) {
        if (!(server.getHandler() instanceof ContextHandlerCollection contexts)
                || contexts.getHandlers().size() != 1) {
            throw new IllegalStateException("Felix's Jetty has an unexpected handler tree: " + server.getHandler());
        }
        Handler servlets = contexts.getHandlers().get(0);
        if (servlets instanceof Edge old) {
            // a kernel before this one did not take its edge out
            servlets = old.getHandler();
            old.unmanage(servlets);
        }
        contexts.unmanage(servlets);
        Edge edge = new Edge(servlets, stop, handlers);
        contexts.setHandlers(edge);
        edge.manage(servlets);
        installed = new Installed(contexts, servlets, edge);
    }

    /** Felix's own plain HTTP listener (not TLS, not one a factory made), or null. */
    private static ServerConnector felixListener(Server server) {
        List<ServerConnector> plain = new ArrayList<>();
        for (Connector c : server.getConnectors()) {
            if (c instanceof ServerConnector s
                    && s.getConnectionFactory(SslConnectionFactory.class) == null
                    && !"atrium-http".equals(s.getName())) {
                plain.add(s);
            }
        }
        return plain.isEmpty() ? null : plain.get(0);
    }
}
