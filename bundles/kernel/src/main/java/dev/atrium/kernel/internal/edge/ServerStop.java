package dev.atrium.kernel.internal.edge;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's stop, seen from its clients. When the framework begins to stop (SIGTERM, or an operator's stop) and
 * before any bundle stops, every new request is answered {@code 503} with the spec's body and {@code Retry-After}, the
 * answers in flight get at most the drain time to complete (streams that last as long as their client, server-sent
 * events and WebSockets, are not waited for), and then every listener closes: new connections are refused and what
 * still runs is cut. Only then do the bundles stop, so no client meets a half-stopped server (a
 * route gone, Jetty's HTML 404, a servlet stack torn down under a request).
 *
 * <p>The framework fires the system bundle's STOPPING event on its shutdown thread before it lowers the start level,
 * and delivers it to synchronous listeners before it goes on: waiting here holds the whole stop.
 */
@Component(
        service = ServerStop.class,
        configurationPid = "dev.atrium.kernel.edge",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
public class ServerStop implements SynchronousBundleListener, Relay.Flights {

    private static final Logger LOG = LoggerFactory.getLogger(ServerStop.class);

    private volatile long drainNanos;
    private final BundleContext context;
    private volatile Server server;
    private final Set<Flight> inFlight = ConcurrentHashMap.newKeySet();
    private final Object drained = new Object();
    private volatile boolean stopping;

    @Activate
    public ServerStop(HttpListener.Config config, BundleContext context) {
        this.drainNanos = TimeUnit.MILLISECONDS.toNanos(config.stopDrainMillis());
        this.context = context;
        context.addBundleListener(this);
    }

    @Modified
    void modified(HttpListener.Config config) {
        this.drainNanos = TimeUnit.MILLISECONDS.toNanos(config.stopDrainMillis());
    }

    @Deactivate
    void deactivate() {
        context.removeBundleListener(this);
    }

    /** A request whose answer is not complete yet. Identity, not value: each is one request. */
    static final class Flight {
        final Request request;
        final Response response;
        /** For a relayed request ({@link RelayConnection}), which has no Jetty request: whether it is a stream. */
        final java.util.function.BooleanSupplier relayedStream;

        Flight(Request request, Response response) {
            this.request = request;
            this.response = response;
            this.relayedStream = null;
        }

        Flight(java.util.function.BooleanSupplier relayedStream) {
            this.request = null;
            this.response = null;
            this.relayedStream = relayedStream;
        }

        /**
         * A stream that lasts as long as its client stays (server-sent events, a WebSocket): the drain does not wait for
         * it, the listener's close ends it. Read from the drain's thread, so only once the answer's head is committed
         * (and no longer changes).
         */
        boolean isStream() {
            if (relayedStream != null) {
                return relayedStream.getAsBoolean();
            }
            // a WebSocket upgrade; not any Upgrade (Java's HTTP client asks every request for h2c)
            String upgrade = request.getHeaders().get(HttpHeader.UPGRADE);
            if (upgrade != null && upgrade.toLowerCase(java.util.Locale.ROOT).contains("websocket")) {
                return true;
            }
            if (!response.isCommitted()) {
                return false;
            }
            String type = response.getHeaders().get(HttpHeader.CONTENT_TYPE);
            return type != null && type.startsWith("text/event-stream");
        }
    }

    /**
     * Counts a request in; null when the server is stopping, and the request is to be answered 503. Every flight
     * returned is given back to {@link #exit} once.
     */
    Flight enter(Request request, Response response) {
        return enter(new Flight(request, response));
    }

    /** Counts a relayed request in, as {@link #enter(Request, Response)}. */
    @Override
    public Flight enter(java.util.function.BooleanSupplier stream) {
        return enter(new Flight(stream));
    }

    private Flight enter(Flight flight) {
        inFlight.add(flight);
        // counted before the flag is read, and the flag set before the drain reads the set: each request is either
        // refused or waited for
        if (stopping) {
            exit(flight);
            return null;
        }
        return flight;
    }

    @Override
    public void exit(Flight flight) {
        inFlight.remove(flight);
        if (stopping) {
            synchronized (drained) {
                drained.notifyAll();
            }
        }
    }

    /** Whether only streams are left, which the drain does not wait for. */
    private boolean onlyStreamsLeft() {
        for (Flight f : inFlight) {
            if (!f.isStream()) {
                return false;
            }
        }
        return true;
    }

    /** The server whose listeners close when the framework stops. */
    void serving(Server server) {
        this.server = server;
    }

    @Override
    public void bundleChanged(BundleEvent event) {
        if (event.getType() == BundleEvent.STOPPING && event.getBundle().getBundleId() == 0) {
            drain();
        }
    }

    void drain() {
        long start = System.nanoTime();
        stopping = true;
        LOG.info(
                "the server is stopping: new requests are answered 503, {} in flight get up to {} ms",
                inFlight.size(),
                TimeUnit.NANOSECONDS.toMillis(drainNanos));
        long deadline = start + drainNanos;
        synchronized (drained) {
            long left;
            while (!onlyStreamsLeft() && (left = deadline - System.nanoTime()) > 0) {
                try {
                    // woken by each answer that completes; a stream's head may be committed meanwhile, so look again
                    TimeUnit.NANOSECONDS.timedWait(drained, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        int streams = 0;
        int cut = 0;
        for (Flight f : inFlight) {
            if (f.isStream()) {
                streams++;
            } else {
                cut++;
            }
        }
        Server server = this.server;
        if (server != null) {
            for (Connector c : server.getConnectors()) {
                try {
                    // no more accepts and idle connections closed, then the rest (nothing is left to wait for)
                    var shut = c.shutdown();
                    c.stop();
                    shut.cancel(false);
                } catch (Exception e) {
                    LOG.warn("listener {} did not close: {}", c, e.toString());
                }
            }
        }
        LOG.info(
                "listeners closed after {} ms; {} request(s) still running were cut, {} stream(s) ended",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                cut,
                streams);
    }
}
