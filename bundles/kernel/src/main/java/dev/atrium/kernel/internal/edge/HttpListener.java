package dev.atrium.kernel.internal.edge;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.felix.http.jetty.ConnectorFactory;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.eclipse.jetty.util.component.Container;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
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
        long stopDrainMillis() default 6_000;

        @AttributeDefinition(
                description = "Relay the requests a RelayRouter takes (deployed services' hosts) on the selector "
                        + "threads, below the servlet stack; false sends every request through Jetty's HTTP and the "
                        + "servlets. Read when the listener is made")
        boolean relay() default true;
    }

    private static final Logger LOG = LoggerFactory.getLogger(HttpListener.class);

    /** Where the listener listens, kept on the server for the next kernel (host, or "" for every interface). */
    static final String HOST = "atrium.edge.host";

    static final String PORT = "atrium.edge.port";

    /** The kernel's listener's connector name. */
    static final String NAME = "atrium-http";

    private volatile Config config;
    private final ServerStop stop;
    private final EdgeHandlers handlers;
    private final RelayRoutes relayRoutes;
    private volatile Installed installed;

    /**
     * What this component put into a server, taken out again when it goes, so that no request meets a stopped kernel:
     * the edge between the context collection and the servlets, and the listener that equips every connector.
     */
    private record Installed(
            Server server, ContextHandlerCollection contexts, Handler servlets, Edge edge, Container.Listener equip) {}

    @Activate
    public HttpListener(
            Config config,
            @Reference ServerStop stop,
            @Reference EdgeHandlers handlers,
            @Reference RelayRoutes relayRoutes) {
        this.config = config;
        this.stop = stop;
        this.handlers = handlers;
        this.relayRoutes = relayRoutes;
    }

    /** New settings apply to the connections and bodies that come next; no listener is closed for them. */
    @Modified
    void modified(Config config) {
        this.config = config;
    }

    @Deactivate
    void deactivate() {
        Installed i = installed;
        installed = null;
        if (i != null) {
            i.server().removeEventListener(i.equip());
            i.edge().unmanage(i.servlets());
            i.contexts().setHandlers(i.servlets());
            i.contexts().manage(i.servlets());
        }
    }

    @Override
    public Connector createConnector(Server server) {
        // everything that can fail is checked before Felix's listener goes: a failure here leaves it serving
        if (!(server.getHandler() instanceof ContextHandlerCollection contexts)
                || contexts.getHandlers().size() != 1) {
            throw new IllegalStateException("Felix's Jetty has an unexpected handler tree: " + server.getHandler());
        }
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
        } else if (server.getAttribute(PORT) instanceof Integer kept) {
            // the kernel was refreshed: Felix's listener went with the first kernel's
            host = (String) server.getAttribute(HOST);
            host = host == null || host.isEmpty() ? null : host;
            port = kept;
            http = new HttpConfiguration((HttpConfiguration) server.getAttribute(HttpConfiguration.class.getName()));
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

        HttpConnectionFactory factory = new HttpConnectionFactory(http);
        factory.setInputBufferSize(inputBuffer);
        ServerConnector listener;
        if (config.relay()) {
            ClientConnector upstreams = new ClientConnector();
            // a pool of its own: its selector thread is not taken from the server's budget of request threads
            QueuedThreadPool upstreamThreads = new QueuedThreadPool(4, 1);
            upstreamThreads.setName("atrium-relay-upstream");
            upstreamThreads.setDaemon(true);
            upstreams.setExecutor(upstreamThreads);
            upstreams.addBean(upstreamThreads, true);
            upstreams.setScheduler(server.getScheduler());
            upstreams.setSelectors(1);
            upstreams.setConnectTimeout(Duration.ofSeconds(5));
            upstreams.setIdleTimeout(Duration.ofMinutes(5));
            upstreams.setTCPNoDelay(true);
            listener = new ServerConnector(
                    server,
                    acceptors,
                    selectors,
                    new Relay(
                            relayRoutes,
                            stop,
                            factory,
                            upstreams,
                            () -> config.minBodyBytesPerSecond(),
                            () -> config.bodyRateGraceMillis()),
                    factory);
            // started and stopped with the listener, and so are the relayed requests' upstream connections
            listener.addBean(upstreams, true);
        } else {
            listener = new ServerConnector(server, acceptors, selectors, factory);
        }
        listener.setName(NAME);
        listener.setHost(host);
        listener.setPort(port);
        listener.setIdleTimeout(idle);
        if (felix != null) {
            try {
                felix.stop();
            } catch (Exception e) {
                throw new IllegalStateException("Felix's HTTP listener did not stop: " + e, e);
            }
            server.removeConnector(felix);
        }
        server.setErrorHandler(new SpecErrorHandler());
        Edge edge = installEdge(contexts);
        // this listener, the services' HTTPS one and any other: each gets the deadlines when it is added (Felix adds a
        // connector to the server before it starts it), and those there now get them at once
        Container.Listener equip = new Container.Listener() {
            @Override
            public void beanAdded(Container parent, Object child) {
                if (child instanceof Connector connector) {
                    equip(connector, server);
                }
            }

            @Override
            public void beanRemoved(Container parent, Object child) {
                // a connector's deadline goes with it
            }
        };
        server.addEventListener(equip);
        equip(listener, server);
        installed = new Installed(server, contexts, edge.getHandler(), edge, equip);
        stop.serving(server);
        Config c = config;
        LOG.info(
                "the kernel's HTTP listener takes {}:{} (request headers within {} ms, bodies at least {} B/s)",
                host == null ? "*" : host,
                port,
                c.headerTimeoutMillis(),
                c.minBodyBytesPerSecond());
        return listener;
    }

    /** Gives a connector the header deadline and the slowest body rate, once. */
    private void equip(Connector connector, Server server) {
        if (connector.getBean(HeaderDeadline.class) == null) {
            HeaderDeadline deadline = new HeaderDeadline(() -> config.headerTimeoutMillis(), server.getScheduler());
            // managed: it starts and stops with its connector, and one already running starts it here
            connector.addBean(deadline, true);
            if (connector.isStarted()) {
                try {
                    deadline.start();
                } catch (Exception e) {
                    LOG.warn("the header deadline of {} did not start: {}", connector, e.toString());
                }
            }
        }
        HttpConnectionFactory factory = connector.getConnectionFactory(HttpConnectionFactory.class);
        if (factory != null
                && factory.getHttpConfiguration().getCustomizers().stream().noneMatch(BodyRate.class::isInstance)) {
            factory.getHttpConfiguration()
                    .addCustomizer(
                            new BodyRate(() -> config.minBodyBytesPerSecond(), () -> config.bodyRateGraceMillis()));
        }
    }

    /**
     * Puts the {@link Edge} between Felix's context collection and its servlet context. Felix's server is started by
     * now and is not a dynamic container, but its {@code ContextHandlerCollection} is: the servlet context moves into
     * the edge without being stopped (unmanaged while it moves), then the edge is started and managed by the
     * collection, and manages the context, so that a stop of the server stops both.
     */
    private Edge installEdge(ContextHandlerCollection contexts) {
        Handler servlets = contexts.getHandlers().get(0);
        if (servlets instanceof Handler.Wrapper old
                && servlets.getClass().getName().equals(Edge.class.getName())) {
            // an edge a kernel before this one did not take out
            Handler inner = old.getHandler();
            old.unmanage(inner);
            servlets = inner;
        } else {
            contexts.unmanage(servlets);
        }
        Edge edge = new Edge(servlets, stop, handlers);
        contexts.setHandlers(edge);
        edge.manage(servlets);
        try {
            edge.start();
        } catch (Exception e) {
            throw new IllegalStateException("the kernel's edge did not start: " + e, e);
        }
        contexts.manage(edge);
        return edge;
    }
    /** Felix's own plain HTTP listener (not TLS, not one a factory made), or null. */
    private static ServerConnector felixListener(Server server) {
        List<ServerConnector> plain = new ArrayList<>();
        for (Connector c : server.getConnectors()) {
            if (c instanceof ServerConnector s
                    && s.getConnectionFactory(SslConnectionFactory.class) == null
                    && !NAME.equals(s.getName())) {
                plain.add(s);
            }
        }
        return plain.isEmpty() ? null : plain.get(0);
    }
}
