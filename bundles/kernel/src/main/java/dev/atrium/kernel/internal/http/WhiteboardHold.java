package dev.atrium.kernel.internal.http;

import java.io.IOException;
import java.util.Hashtable;

import javax.sql.DataSource;

import org.osgi.framework.BundleContext;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds Aries' default JAX-RS whiteboard back at start-up until the database is there and every component waiting for
 * it runs. Aries rebuilds the whole CXF application for every resource it hears of: when the database came after the
 * whiteboard (always on a fresh data directory, where initdb runs), a start rebuilt it about sixty times, one per
 * capability resource; when the database came first, once. The whiteboard is held with its own configuration
 * ({@code enabled=false}, which Aries reads; it is at start level 10, this at 2) and let go when no Atrium component is
 * left unsatisfied, or {@link #MAX_HOLD_MILLIS} after the database came, or {@link #NO_DATABASE_MILLIS} without one (the
 * API then says what is wrong). Only a start is held: once let go, the whiteboard stays.
 */
@Component(immediate = true)
public class WhiteboardHold {

    static final String PID = "org.apache.aries.jax.rs.whiteboard.default";
    static final long MAX_HOLD_MILLIS = 10_000;
    static final long NO_DATABASE_MILLIS = 60_000;
    private static final Logger LOG = LoggerFactory.getLogger(WhiteboardHold.class);

    private final BundleContext context;
    private final ConfigurationAdmin admin;
    private final ServiceComponentRuntime scr;
    private final Thread waiter;
    private volatile boolean stopped;

    @Activate
    public WhiteboardHold(BundleContext context, @Reference ConfigurationAdmin admin, @Reference ServiceComponentRuntime scr) {
        this.context = context;
        this.admin = admin;
        this.scr = scr;
        if (context.getServiceReference(DataSource.class) != null || configured()) {
            waiter = null;
            return;
        }
        write(false);
        waiter = new Thread(this::releaseWhenDue, "atrium-whiteboard-hold");
        waiter.start();
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        stopped = true;
        if (waiter != null) {
            waiter.interrupt();
            waiter.join(5_000);
        }
    }

    /** Whether the whiteboard's configuration exists already: this component restarted, or an operator made it. */
    private boolean configured() {
        try {
            return admin.listConfigurations("(service.pid=" + PID + ")") != null;
        } catch (IOException | org.osgi.framework.InvalidSyntaxException e) {
            return false;
        }
    }

    private void releaseWhenDue() {
        long started = System.nanoTime();
        long databaseAt = 0;
        try {
            while (!stopped) {
                long now = System.nanoTime();
                if (databaseAt == 0 && context.getServiceReference(DataSource.class) != null) {
                    databaseAt = now;
                }
                if (databaseAt == 0 ? now - started >= NO_DATABASE_MILLIS * 1_000_000
                        : now - databaseAt >= MAX_HOLD_MILLIS * 1_000_000 || ComponentStates.problems(context, scr).isEmpty()) {
                    break;
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            return;
        } catch (IllegalStateException stopping) {
            return;
        }
        if (!stopped) {
            LOG.debug("letting the JAX-RS whiteboard start after {} ms", (System.nanoTime() - started) / 1_000_000);
            write(true);
        }
    }

    private void write(boolean enabled) {
        try {
            Configuration configuration = admin.getConfiguration(PID, "?");
            Hashtable<String, Object> properties = new Hashtable<>();
            properties.put("enabled", Boolean.toString(enabled));
            configuration.update(properties);
        } catch (IOException | IllegalStateException e) {
            LOG.warn("the JAX-RS whiteboard's configuration could not be written; it starts without waiting", e);
        }
    }
}
