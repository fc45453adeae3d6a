package dev.atrium.kernel.internal.edge;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.server.Connector;
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
 * requests in flight get at most the drain time to finish, and then every listener closes: new connections are
 * refused and what still runs is cut. Only then do the bundles stop, so no client meets a half-stopped server (a
 * route gone, Jetty's HTML 404, a servlet stack torn down under a request).
 *
 * <p>The framework fires the system bundle's STOPPING event on its shutdown thread before it lowers the start level,
 * and delivers it to synchronous listeners before it goes on: waiting here holds the whole stop.
 */
@Component(
        service = ServerStop.class,
        configurationPid = "dev.atrium.kernel.edge",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
public class ServerStop implements SynchronousBundleListener {

    private static final Logger LOG = LoggerFactory.getLogger(ServerStop.class);

    private volatile long drainNanos;
    private final BundleContext context;
    private volatile Server server;
    private final AtomicInteger inFlight = new AtomicInteger();
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

    /**
     * Counts a request in; false when the server is stopping, and the request is to be answered 503. Every true is
     * followed by one {@link #exit()}.
     */
    public boolean enter() {
        inFlight.incrementAndGet();
        // counted before the flag is read, and the flag set before the drain reads the count: each request is either
        // refused or waited for
        if (stopping) {
            exit();
            return false;
        }
        return true;
    }

    public void exit() {
        if (inFlight.decrementAndGet() == 0 && stopping) {
            synchronized (drained) {
                drained.notifyAll();
            }
        }
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
                inFlight.get(),
                TimeUnit.NANOSECONDS.toMillis(drainNanos));
        long deadline = start + drainNanos;
        synchronized (drained) {
            long left;
            while (inFlight.get() > 0 && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(drained, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        int cut = inFlight.get();
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
                "listeners closed after {} ms; {} request(s) still running were cut",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                cut);
    }
}
