package dev.atrium.kernel.api;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * Live resources a bundle hands to its own next revision across an update or refresh, instead of closing them as it
 * stops and having the new revision open them again: child processes and their pipes (workerd serving deployed
 * workers), so that what they serve goes on while the bundle changes. Each bundle gets its own keepsakes (the service
 * is bundle-scoped): one bundle cannot take what another kept.
 *
 * <p>Only the JDK's own types may be kept ({@link Process}, streams, strings, numbers, paths, and lists and maps of
 * them): an object of the bundle's own classes would keep its old class loader alive. What the next revision does not
 * take within the time given is closed by the kernel (a {@code Process} and its descendants destroyed, an
 * {@link AutoCloseable} closed), as it is when the kernel stops.
 *
 * @since 2.5
 */
@ProviderType
public interface Keepsakes {

    /**
     * Keeps {@code things} under {@code key} (replacing, and closing, what was kept there before) until the bundle's
     * next revision takes them or {@code within} has passed.
     *
     * @throws IllegalArgumentException when a value is not of a JDK type
     */
    void keep(String key, Map<String, ?> things, Duration within);

    /** What this bundle's previous revision kept under {@code key}, now the caller's to close; empty when nothing. */
    Optional<Map<String, Object>> take(String key);

    /**
     * Whether a component of {@code context}'s bundle deactivates for a restart (the bundle updated or refreshed, a
     * component re-activated) rather than for good (stopped by an operator, a feature disabled, uninstalled, the server
     * stopping): an update or refresh stops a bundle transiently, so it stays persistently started.
     */
    static boolean restarting(BundleContext context) {
        try {
            return restarting(context.getBundle(), context);
        } catch (IllegalStateException gone) {
            return false;
        }
    }

    /**
     * The same for another bundle ({@code bundle}, e.g. one whose service went away): {@code context} is any live
     * bundle context, for the framework's state.
     */
    static boolean restarting(Bundle bundle, BundleContext context) {
        try {
            BundleStartLevel level = bundle.adapt(BundleStartLevel.class);
            return bundle.getState() != Bundle.UNINSTALLED
                    && level != null
                    && level.isPersistentlyStarted()
                    && context.getBundle(0).getState() == Bundle.ACTIVE;
        } catch (IllegalStateException | SecurityException gone) {
            return false;
        }
    }

    /**
     * Loads every class of {@code bundle} under {@code packagePath} (e.g. {@code "dev/atrium/x/internal"}) now. An update
     * disposes of a revision's class loader once nothing is wired to it, while requests the old revision was answering
     * may still run: a class they had not loaded yet would then fail with {@code NoClassDefFoundError}. A component
     * that answers requests across its bundle's updates (a {@link HostRouter}) calls this when it activates.
     *
     * @since 2.8
     */
    static void loadClassesNow(Bundle bundle, String packagePath) {
        java.util.Enumeration<java.net.URL> classes = bundle.findEntries(packagePath, "*.class", true);
        while (classes != null && classes.hasMoreElements()) {
            String path = classes.nextElement().getPath();
            String name = path.substring(path.startsWith("/") ? 1 : 0, path.length() - ".class".length())
                    .replace('/', '.');
            try {
                bundle.loadClass(name);
            } catch (ClassNotFoundException | LinkageError e) {
                // a class that cannot load now would not load later either; the request that needs it says so
            }
        }
    }
}
