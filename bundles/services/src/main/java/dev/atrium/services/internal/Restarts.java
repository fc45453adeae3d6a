package dev.atrium.services.internal;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * Whether a component of this capability deactivates for a restart (the bundle updated or refreshed, a component
 * re-activated for a new reference) rather than for good (stopped by an operator, a feature disabled, uninstalled, or
 * the server stopping). An update or refresh stops a bundle transiently, so it stays persistently started.
 */
final class Restarts {

    private Restarts() {
    }

    static boolean restarting(BundleContext context) {
        try {
            Bundle self = context.getBundle();
            BundleStartLevel level = self.adapt(BundleStartLevel.class);
            return self.getState() != Bundle.UNINSTALLED && level != null && level.isPersistentlyStarted()
                    && context.getBundle(0).getState() == Bundle.ACTIVE;
        } catch (IllegalStateException | SecurityException gone) {
            return false;
        }
    }
}
