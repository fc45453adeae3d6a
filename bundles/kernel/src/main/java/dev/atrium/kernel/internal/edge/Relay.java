package dev.atrium.kernel.internal.edge;

import dev.atrium.kernel.api.RelayRouter;
import java.net.InetSocketAddress;
import java.util.Map;
import org.eclipse.jetty.io.ClientConnectionFactory;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.AbstractConnectionFactory;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.util.Promise;

/**
 * The kernel listener's first protocol: every connection starts as a {@link RelayConnection}, which passes requests a
 * {@link RelayRouter} takes straight to their upstream, and hands the connection to Jetty's HTTP/1.1 ({@code http}) at
 * the first request none takes. Upstream connections are made on a {@link ClientConnector} of the listener's own,
 * started and stopped with it.
 */
final class Relay extends AbstractConnectionFactory {

    static final String PROTOCOL = "atrium-relay";

    final RelayRoutes routes;
    final Flights flights;
    final HttpConnectionFactory http;
    final ClientConnector upstreams;
    /** The slowest a relayed request body may arrive (bytes per second, 0 for no check), as the servlet path's. */
    final java.util.function.LongSupplier minBodyBytesPerSecond;

    final java.util.function.LongSupplier bodyRateGraceMillis;

    /** Counts relayed requests in and out of the stop's drain ({@link ServerStop} in the server). */
    interface Flights {
        /** The request under way, or null when the server is stopping and Jetty's edge is to answer it 503. */
        ServerStop.Flight enter(java.util.function.BooleanSupplier stream);

        void exit(ServerStop.Flight flight);
    }

    Relay(
            RelayRoutes routes,
            Flights flights,
            HttpConnectionFactory http,
            ClientConnector upstreams,
            java.util.function.LongSupplier minBodyBytesPerSecond,
            java.util.function.LongSupplier bodyRateGraceMillis) {
        super(PROTOCOL);
        this.routes = routes;
        this.flights = flights;
        this.http = http;
        this.upstreams = upstreams;
        this.minBodyBytesPerSecond = minBodyBytesPerSecond;
        this.bodyRateGraceMillis = bodyRateGraceMillis;
        setInputBufferSize(http.getInputBufferSize());
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        return configure(new RelayConnection(this, connector, endPoint), connector, endPoint);
    }

    /** Opens a connection to {@code address}, made by {@code make}; the promise fails when it cannot be made. */
    void connect(
            InetSocketAddress address,
            java.util.function.Function<EndPoint, Connection> make,
            Promise<Connection> promise) {
        ClientConnectionFactory factory = new ClientConnectionFactory() {
            @Override
            public Connection newConnection(EndPoint endPoint, Map<String, Object> context) {
                return make.apply(endPoint);
            }
        };
        Map<String, Object> context = new java.util.HashMap<>();
        context.put(ClientConnector.CLIENT_CONNECTION_FACTORY_CONTEXT_KEY, factory);
        context.put(ClientConnector.CONNECTION_PROMISE_CONTEXT_KEY, promise);
        context.put(org.eclipse.jetty.io.Transport.class.getName(), org.eclipse.jetty.io.Transport.TCP_IP);
        try {
            upstreams.connect(address, context);
        } catch (RuntimeException e) {
            promise.failed(e);
        }
    }
}
