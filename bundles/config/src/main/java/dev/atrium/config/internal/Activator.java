package dev.atrium.config.internal;

import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.ConfigurationListener;
import org.osgi.service.cm.ConfigurationPlugin;
import org.osgi.util.tracker.ServiceTracker;
import org.slf4j.LoggerFactory;

/**
 * Registers {@link EnvironmentDefaults} (ConfigAdmin waits for it: {@code felix.cm.config.plugins} in
 * launcher/atrium.bndrun) and makes sure every Atrium PID has a configuration, so that the plugin runs for it even
 * where the operator configured nothing. An activator, at start level 1 with ConfigAdmin: the configurations exist
 * before SCR, at level 2, activates the first component. A configuration the operator deletes is made again (empty).
 */
public final class Activator implements BundleActivator {

    /** The plugin's {@code config.plugin.id}, named in the framework property {@code felix.cm.config.plugins}. */
    static final String PLUGIN_ID = "dev.atrium.config";

    private final Map<String, List<Setting>> settings = Settings.all();
    private final Map<String, String> madeOnlyWhenSet = Settings.madeOnlyWhenSet();
    private EnvironmentDefaults defaults;
    private ServiceTracker<ConfigurationAdmin, ConfigurationAdmin> admins;
    /** How long after a deletion the empty configuration is made again. */
    private static final long RECREATE_DELAY_MILLIS = 500;
    private final ScheduledExecutorService recreate = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "atrium-config-recreate");
        t.setDaemon(true);
        return t;
    });

    @Override
    public void start(BundleContext context) {
        Hashtable<String, Object> pluginProperties = new Hashtable<>();
        pluginProperties.put("config.plugin.id", PLUGIN_ID);
        defaults = new EnvironmentDefaults(settings, System::getenv, context::getProperty);
        context.registerService(ConfigurationPlugin.class, defaults, pluginProperties);
        context.registerService(ConfigurationListener.class, this::configurationChanged, null);
        admins = new ServiceTracker<>(context, ConfigurationAdmin.class, null) {
            @Override
            public ConfigurationAdmin addingService(ServiceReference<ConfigurationAdmin> reference) {
                ConfigurationAdmin admin = super.addingService(reference);
                settings.keySet().forEach(pid -> ensure(admin, pid));
                return admin;
            }
        };
        admins.open();
    }

    @Override
    public void stop(BundleContext context) throws InterruptedException {
        recreate.shutdownNow();
        recreate.awaitTermination(5, TimeUnit.SECONDS);
        admins.close();
    }

    private void configurationChanged(ConfigurationEvent event) {
        ConfigurationAdmin admin = admins.getService();
        if (event.getType() == ConfigurationEvent.CM_DELETED && event.getFactoryPid() == null && settings.containsKey(event.getPid())
                && admin != null) {
            // not at once: SCR hears of the deletion through its own listener, and a configuration made again before it
            // has is taken for the deleted one (its change count is lower, so SCR keeps the deleted values)
            recreate.schedule(() -> ensure(admin, event.getPid()), RECREATE_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private void ensure(ConfigurationAdmin admin, String pid) {
        try {
            Configuration configuration = admin.getConfiguration(pid, "?");
            Dictionary<String, Object> stored = configuration.getProperties();
            String required = madeOnlyWhenSet.get(pid);
            if (required == null) {
                if (stored == null) {
                    configuration.update(new Hashtable<>());
                }
                return;
            }
            // a component that exists only when configured: made only while the environment (or a framework property)
            // configures it. Nothing made here outlives a run: the launcher starts with a clean framework storage.
            boolean set = settings.get(pid).stream().filter(s -> s.property().equals(required)).anyMatch(s -> defaults.resolve(s) != null);
            if (set && stored == null) {
                configuration.update(new Hashtable<>());
            }
        } catch (IOException | IllegalStateException e) {
            // looked up here, not in a static field: SLF4J binds at its first use, and this bundle starts before the provider
            LoggerFactory.getLogger(Activator.class).error("no configuration could be made for {}: its component sees no "
                    + "environment settings", pid, e);
        }
    }
}
