package dev.atrium.config.internal;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;

/**
 * Stops the framework when the JVM is asked to exit (SIGTERM, Ctrl-C), so that every bundle stops as it would on an
 * update: requests end, threads and connections are released, and the embedded database stops after everything that
 * uses it. bnd's launcher installs no such hook, and without it the JVM exited with every bundle still active.
 */
final class StopOnSignal {

    /** How long the JVM waits for the framework to stop before it exits anyway. */
    static final long STOP_WAIT_MILLIS = 25_000;

    private final Thread hook;

    StopOnSignal(BundleContext context) {
        Bundle system = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION);
        hook = new Thread(() -> stop(system), "atrium-stop-on-signal");
    }

    void install() {
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Removes the hook when this bundle stops; not possible (nor needed) once the JVM is already shutting down. */
    void uninstall() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook itself is what is stopping this bundle
        }
    }

    private static void stop(Bundle system) {
        try {
            system.stop();
            if (system instanceof Framework framework) {
                framework.waitForStop(STOP_WAIT_MILLIS);
            }
        } catch (BundleException | IllegalStateException e) {
            // already stopping or stopped
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
