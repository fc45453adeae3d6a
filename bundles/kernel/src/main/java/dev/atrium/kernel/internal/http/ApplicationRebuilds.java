package dev.atrium.kernel.internal.http;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.apache.cxf.Bus;
import org.apache.cxf.endpoint.Server;
import org.apache.cxf.endpoint.ServerLifeCycleListener;
import org.apache.cxf.endpoint.ServerLifeCycleManager;
import org.apache.cxf.message.Message;
import org.apache.cxf.phase.PhaseInterceptorChain;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * Holds requests while Aries rebuilds the JAX-RS application. Aries rebuilds it whenever a resource or an extension
 * comes or goes, and it does so by destroying the application's CXF server before it builds the next one: in between,
 * every route answers "no route". A bundle's start or stop closes the {@link UpdateGate} before that, but a component
 * registered again without one (a configuration change, a component Aries activates late at start) did not, and a
 * request met the empty application right after {@code /healthz} said 200 ("no route for POST /admin/users", a suite
 * at load). CXF tells its server life-cycle listeners when a server stops and when one starts, so this component
 * listens on the application's bus and a request arriving in between waits for the start. The bus is learnt from the
 * first request ({@link RebuildWatch}, a pre-matching filter, so the readiness probes made before {@code /healthz}
 * says 200 are seen too). CXF's own OSGi listener does not add listener services to the bus Aries makes.
 *
 * <p>A request already inside the application when a rebuild begins would meet a server whose destination is gone
 * (an NPE in CXF, a 500), so the rebuild waits for those first, but only {@link #MAX_DRAIN_NANOS}: it runs in Aries'
 * rebuilding thread, which may hold locks a request in flight needs. The thread that causes the rebuild (an operator's
 * request that stops a bundle) is not waited for. A rebuild that never ends with a start (Aries gives up on an
 * application, or the server stops) stops holding after {@link #MAX_HOLD_NANOS}.
 */
@Component(service = ApplicationRebuilds.class)
public class ApplicationRebuilds implements ServerLifeCycleListener {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ApplicationRebuilds.class);

    /** How long a rebuild is waited for at most, counted from its start. */
    static final long MAX_HOLD_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** How long a rebuild waits at most for the requests already inside the application. */
    static final long MAX_DRAIN_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** The threads serving a request inside the application now: a set, so the rebuilding thread can leave itself out. */
    private final Set<Thread> inFlight = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final Object lock = new Object();
    /** The buses listened on, weakly: Aries makes a new bus when it makes an application again. */
    private final Set<ServerLifeCycleManager> managers = Collections.newSetFromMap(new WeakHashMap<>());

    private volatile Bus lastSeen;
    /** Servers stopped and not yet followed by a start. */
    private int rebuilding;
    /** When the latest rebuild began. */
    private long since;

    private volatile boolean holding;
    private volatile boolean active = true;

    private final LongAdder rebuilds = new LongAdder();
    private final LongAdder heldRequests = new LongAdder();

    @Activate
    public ApplicationRebuilds() {
        // no set-up: the first request names the bus to listen on
    }

    @Deactivate
    void deactivate() {
        active = false;
        synchronized (lock) {
            for (ServerLifeCycleManager m : managers) {
                m.unRegisterListener(this);
            }
            managers.clear();
            rebuilding = 0;
            holding = false;
            lock.notifyAll();
        }
    }

    /** Listens on the bus of the application serving the current request, once per bus. */
    void watchCurrentApplication() {
        Message message = PhaseInterceptorChain.getCurrentMessage();
        Bus bus = message == null || message.getExchange() == null
                ? null
                : message.getExchange().getBus();
        if (bus == null || bus == lastSeen || !active) {
            return;
        }
        ServerLifeCycleManager manager = bus.getExtension(ServerLifeCycleManager.class);
        synchronized (lock) {
            lastSeen = bus;
            if (manager != null && managers.add(manager)) {
                manager.registerListener(this);
                LOG.info("requests wait while the JAX-RS application of bus {} is rebuilt", bus.getId());
            }
        }
    }

    @Override
    public void stopServer(Server server) {
        synchronized (lock) {
            rebuilding++;
            since = System.nanoTime();
            // set before the requests in flight are looked at: a request adds itself before it looks at this flag, so
            // each one either waits or is waited for
            holding = true;
            long deadline = since + MAX_DRAIN_NANOS;
            Thread self = Thread.currentThread();
            try {
                while (othersInFlight(self) && System.nanoTime() < deadline) {
                    lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        rebuilds.increment();
    }

    private boolean othersInFlight(Thread self) {
        for (Thread t : inFlight) {
            if (t != self) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void startServer(Server server) {
        synchronized (lock) {
            // the first start of every server is not the end of a rebuild this listener saw begin
            if (rebuilding > 0) {
                rebuilding--;
            }
            if (rebuilding == 0) {
                holding = false;
                lock.notifyAll();
            }
        }
    }

    /**
     * Counts a request into the application, first waiting while it is being rebuilt (at most until
     * {@link #MAX_HOLD_NANOS} after the rebuild began). Returns the milliseconds waited. Every call is followed by
     * {@link #exit()}, whatever happens. A request that is not {@code waitedFor} waits too, but a rebuild does not wait
     * for it: an operator's request that updates a bundle waits for the update, which rebuilds the application in
     * another thread when it refreshes bundles.
     */
    long enter(boolean waitedFor) throws InterruptedException {
        Thread self = Thread.currentThread();
        if (waitedFor) {
            inFlight.add(self);
        }
        if (!holding) {
            return 0;
        }
        inFlight.remove(self);
        long started = System.nanoTime();
        synchronized (lock) {
            lock.notifyAll();
            while (holding) {
                long left = since + MAX_HOLD_NANOS - System.nanoTime();
                if (left <= 0) {
                    // a rebuild that never started its server: stop holding anyone for it
                    rebuilding = 0;
                    holding = false;
                    lock.notifyAll();
                    break;
                }
                lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
            // under the lock: a rebuild cannot begin between the last look at the flag and the count
            if (waitedFor) {
                inFlight.add(self);
            }
        }
        heldRequests.increment();
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    }

    /** The request of this thread has left the application. */
    void exit() {
        inFlight.remove(Thread.currentThread());
        if (holding) {
            synchronized (lock) {
                lock.notifyAll();
            }
        }
    }

    /** Rebuilds of the JAX-RS application seen since the start. */
    long rebuilds() {
        return rebuilds.sum();
    }

    /** Requests that waited for a rebuild to end. */
    long heldRequests() {
        return heldRequests.sum();
    }

    /** Whether a rebuild is under way now. */
    boolean rebuilding() {
        return holding;
    }
}
