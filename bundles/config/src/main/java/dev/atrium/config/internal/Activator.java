package dev.atrium.config.internal;

import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
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
 * before SCR, at level 2, activates the first component. A configuration the operator deletes is made again (empty),
 * with a change count above the deleted one's: SCR may hear of the deletion after the new configuration exists (its
 * events arrive on ConfigAdmin's event thread, late under load), and then takes the new one for an update of the deleted
 * one, which it ignores unless the change count is higher. It also stops the framework when the JVM is asked to exit
 * ({@link StopOnSignal}), and ends it when a start fails for good ({@link StartWatch}): this bundle is the runtime's own,
 * first to start and last to stop.
 */
@SuppressWarnings("JdkObsolete") // the framework and ConfigAdmin take a Dictionary: a Hashtable is what one is
public final class Activator implements BundleActivator {

    /** The plugin's {@code config.plugin.id}, named in the framework property {@code felix.cm.config.plugins}. */
    static final String PLUGIN_ID = "dev.atrium.config";

    private final Map<String, List<Setting>> settings = Settings.all();
    private final Map<String, String> madeOnlyWhenSet = Settings.madeOnlyWhenSet();
    private EnvironmentDefaults defaults;
    private StopOnSignal stopOnSignal;
    /** Ends the process when a bundle that failed to start while the framework started does not start on a retry. */
    private final StartWatch startWatch = new StartWatch(System::exit, 2_000);
    /** Ends the process when the framework's start blocks instead of failing. */
    private StartDeadline startDeadline;

    private ServiceTracker<ConfigurationAdmin, ConfigurationAdmin> admins;
    /** The highest change count seen per PID, so that a configuration made again counts past the deleted one. */
    private final Map<String, Long> changeCounts = new ConcurrentHashMap<>();

    private final ExecutorService recreate = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "atrium-config-recreate");
        t.setDaemon(true);
        return t;
    });

    @Override
    public void start(BundleContext context) {
        stopOnSignal = new StopOnSignal(context);
        stopOnSignal.install();
        context.addFrameworkListener(startWatch);
        // only while the framework starts: this bundle started again later (updated, refreshed) has no start to watch
        startDeadline = new StartDeadline(
                StartDeadline.started(context)
                        ? 0
                        : StartDeadline.seconds(
                                context.getProperty(StartDeadline.PROPERTY),
                                System.getenv("ATRIUM_START_DEADLINE_SECONDS")),
                () -> StartDeadline.started(context),
                System::exit);
        context.addFrameworkListener(startDeadline);
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
        context.removeFrameworkListener(startWatch);
        context.removeFrameworkListener(startDeadline);
        startDeadline.close();
        stopOnSignal.uninstall();
        recreate.shutdownNow();
        recreate.awaitTermination(5, TimeUnit.SECONDS);
        admins.close();
    }

    private void configurationChanged(ConfigurationEvent event) {
        ConfigurationAdmin admin = admins.getService();
        if (event.getFactoryPid() != null || !settings.containsKey(event.getPid()) || admin == null) {
            return;
        }
        if (event.getType() == ConfigurationEvent.CM_UPDATED) {
            remember(admin, event.getPid());
        } else if (event.getType() == ConfigurationEvent.CM_DELETED) {
            recreate.execute(() -> ensure(admin, event.getPid()));
        }
    }

    private void remember(ConfigurationAdmin admin, String pid) {
        try {
            Configuration[] found = admin.listConfigurations("(" + Constants.SERVICE_PID + "=" + pid + ")");
            if (found != null) {
                for (Configuration configuration : found) {
                    changeCounts.merge(pid, configuration.getChangeCount(), Math::max);
                }
            }
        } catch (IOException | InvalidSyntaxException | IllegalStateException e) {
            // deleted meanwhile: the count seen before stays the one to pass
        }
    }

    /** Updates a configuration made again until its change count passes every count its PID had before. */
    private void countPastDeleted(Configuration configuration, String pid) throws IOException {
        long passed = changeCounts.getOrDefault(pid, 0L);
        while (configuration.getChangeCount() <= passed) {
            configuration.update(new Hashtable<>());
        }
        changeCounts.merge(pid, configuration.getChangeCount(), Math::max);
    }

    private void ensure(ConfigurationAdmin admin, String pid) {
        try {
            Configuration configuration = admin.getConfiguration(pid, "?");
            Dictionary<String, Object> stored = configuration.getProperties();
            String required = madeOnlyWhenSet.get(pid);
            if (required == null) {
                if (stored == null) {
                    configuration.update(new Hashtable<>());
                    countPastDeleted(configuration, pid);
                }
                return;
            }
            // a component that exists only when configured: made only while the environment (or a framework property)
            // configures it. Nothing made here outlives a run: the launcher starts with a clean framework storage.
            boolean set = settings.get(pid).stream()
                    .filter(s -> s.property().equals(required))
                    .anyMatch(s -> defaults.resolve(s) != null);
            if (set && stored == null) {
                configuration.update(new Hashtable<>());
                countPastDeleted(configuration, pid);
            }
        } catch (IOException | IllegalStateException e) {
            // looked up here, not in a static field: SLF4J binds at its first use, and this bundle starts before the
            // provider
            LoggerFactory.getLogger(Activator.class)
                    .error(
                            "no configuration could be made for {}: its component sees no " + "environment settings",
                            pid,
                            e);
        }
    }
}
