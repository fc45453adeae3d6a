package dev.atrium.operations.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWiring;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns features on and off at run time by starting and stopping their bundles (persistently, so the
 * framework does not start them again at the next start level). The disabled set lives in
 * {@code <data>/features.json} and is applied on activation, before capabilities start (this bundle starts
 * on an earlier start level). Disabling keeps a capability's data; enabling serves it again.
 */
@Component(
        service = FeatureSwitch.class,
        configurationPid = "dev.atrium.operations",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = FeatureSwitch.Config.class)
public class FeatureSwitch {

    @ObjectClassDefinition(name = "Atrium features")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA) that holds features.json")
        String dataDirectory() default "data";
    }

    private static final Logger LOG = LoggerFactory.getLogger(FeatureSwitch.class);
    private static final ObjectMapper JSON = JsonMappers.create();
    /** The capability each capability bundle declares itself with, once, in its manifest (its bnd.bnd). */
    static final String CAPABILITY_NAMESPACE = "atrium.capability";

    private final BundleContext context;
    private final Map<String, Feature> features;
    private final Path stateFile;
    private final Set<String> disabled = new TreeSet<>();
    /**
     * What request threads read, without the lock: enable/disable hold the lock while bundles stop, and a stop
     * waits (in the kernel's update gate) for in-flight requests, which must not wait for the lock in turn.
     */
    private volatile Set<String> disabledNow = Set.of();
    /** The feature whose bundles are being started or stopped now, if any (the health view shows it as switching). */
    private volatile String switching;

    private final Path dataDirectory;
    /** The routes of each disabled feature, read from its bundles' capabilities when it was disabled. */
    private volatile Map<String, List<String>> disabledRoutes = Map.of();

    @Activate
    public FeatureSwitch(BundleContext context, Config config) throws IOException {
        this.context = context;
        this.features = load(context.getBundle());
        this.dataDirectory = Path.of(config.dataDirectory()).toAbsolutePath();
        this.stateFile = dataDirectory.resolve("features.json");
        Set<String> fileDisabled = new TreeSet<>();
        Set<String> fileEnabled = new TreeSet<>();
        if (Files.exists(stateFile)) {
            JsonNode state = JSON.readTree(stateFile.toFile());
            for (String list : List.of("disabled", "enabled")) {
                for (JsonNode name : state.path(list)) {
                    if (features.containsKey(name.asText())) {
                        (list.equals("disabled") ? fileDisabled : fileEnabled).add(name.asText());
                    } else {
                        LOG.warn("{} names an unknown feature '{}'; ignored", stateFile, name.asText());
                    }
                }
            }
        }
        disabled.addAll(initiallyDisabled(features, fileDisabled, fileEnabled));
        publish();
        for (String name : disabled) {
            stopBundles(features.get(name));
            LOG.info("feature {} is disabled", name);
        }
    }

    /**
     * The features off at start: those the state file disables, those off by default ({@code "atrium-enabled-by-default":
     * false}) that it does not enable, and, of two conflicting features both left on, the one off by default (else the
     * second by name), with a warning: two features that serve the same paths never run together.
     */
    static Set<String> initiallyDisabled(
            Map<String, Feature> features, Set<String> fileDisabled, Set<String> fileEnabled) {
        Set<String> off = new TreeSet<>(fileDisabled);
        for (Feature f : features.values()) {
            if (!f.enabledByDefault() && !fileEnabled.contains(f.name())) {
                off.add(f.name());
            }
        }
        for (Feature f : features.values()) {
            for (Feature g : features.values()) {
                if (f.name().compareTo(g.name()) < 0
                        && f.conflictsWith(g)
                        && !off.contains(f.name())
                        && !off.contains(g.name())) {
                    String loser = !g.enabledByDefault() || f.enabledByDefault() ? g.name() : f.name();
                    LOG.warn(
                            "features {} and {} conflict and both were to be enabled; {} stays disabled",
                            f.name(),
                            g.name(),
                            loser);
                    off.add(loser);
                }
            }
        }
        return off;
    }

    /** The enabled feature that conflicts with {@code name}, if any (then {@code name} may not be enabled). */
    static Optional<String> enabledConflict(Map<String, Feature> features, Set<String> disabled, String name) {
        Feature f = features.get(name);
        return features.values().stream()
                .filter(g -> f.conflictsWith(g) && !disabled.contains(g.name()))
                .map(Feature::name)
                .findFirst();
    }

    private static Map<String, Feature> load(Bundle own) throws IOException {
        Map<String, Feature> out = new TreeMap<>();
        Enumeration<URL> files = own.findEntries("features", "*.json", false);
        for (URL url : files == null ? List.<URL>of() : Collections.list(files)) {
            try (InputStream in = url.openStream()) {
                JsonNode f = JSON.readTree(in);
                String file = url.getPath().substring(url.getPath().lastIndexOf('/') + 1);
                List<Feature.Member> members = new ArrayList<>();
                for (JsonNode b : f.path("bundles")) {
                    String[] gav = b.path("id").asText().split(":");
                    if (gav.length < 3) {
                        throw new IOException(file + ": bundle id must be groupId:artifactId:version, got " + b);
                    }
                    members.add(new Feature.Member(
                            gav[0], gav[1], b.path("atrium-api").asBoolean(false)));
                }
                String name = file.substring(0, file.length() - ".json".length());
                List<String> conflicts = new ArrayList<>();
                f.path("atrium-conflicts").forEach(c -> conflicts.add(c.asText()));
                out.put(
                        name,
                        new Feature(
                                name,
                                f.path("description").asText(""),
                                List.copyOf(members),
                                List.copyOf(conflicts),
                                f.path("atrium-enabled-by-default").asBoolean(true)));
            }
        }
        return out;
    }

    public List<Feature> features() {
        return List.copyOf(features.values());
    }

    public boolean isEnabled(String name) {
        return !disabledNow.contains(name);
    }

    /** The disabled feature that owns {@code path}, if any. */
    public Optional<Feature> disabledOwner(String path) {
        for (Map.Entry<String, List<String>> e : disabledRoutes.entrySet()) {
            if (Feature.owns(e.getValue(), path)) {
                return Optional.of(features.get(e.getKey()));
            }
        }
        return Optional.empty();
    }

    /** The feature a bundle belongs to, if any. */
    public Optional<Feature> featureOf(Bundle bundle) {
        return features.values().stream()
                .filter(f -> member(f, bundle).isPresent())
                .findFirst();
    }

    /**
     * The feature's member that {@code bundle} was built as: the bundle carries that artifact's Maven descriptor
     * ({@code META-INF/maven/<groupId>/<artifactId>/pom.properties}), a real link rather than a guessed name.
     */
    static Optional<Feature.Member> member(Feature f, Bundle bundle) {
        try {
            for (Feature.Member m : f.members()) {
                if (bundle.getEntry(m.pomProperties()) != null) {
                    return Optional.of(m);
                }
            }
        } catch (IllegalStateException | NullPointerException uninstalled) {
            // uninstalled since the caller listed it (FileInstall or an operator, meanwhile): it belongs to nothing
            // now. Felix throws IllegalStateException once the bundle says so, and a NullPointerException from getEntry
            // in the moment before, when the revision's content is already closed (CI saw both while FileInstall
            // removed a jar)
        }
        return Optional.empty();
    }

    /** The path patterns the feature's installed bundles declare in their {@code atrium.capability} capabilities. */
    List<String> routes(Feature f) {
        List<String> out = new ArrayList<>();
        for (Bundle b : bundles(f)) {
            out.addAll(declaredRoutes(b));
        }
        return List.copyOf(out);
    }

    /** The {@code routes} attribute (a typed {@code List<String>}) of a bundle's {@code atrium.capability} capabilities. */
    static List<String> declaredRoutes(Bundle bundle) {
        List<BundleCapability> caps;
        BundleWiring wiring = bundle.adapt(BundleWiring.class);
        if (wiring != null) {
            caps = wiring.getCapabilities(CAPABILITY_NAMESPACE);
        } else {
            BundleRevision revision = bundle.adapt(BundleRevision.class);
            caps = revision == null ? List.of() : revision.getDeclaredCapabilities(CAPABILITY_NAMESPACE);
        }
        List<String> out = new ArrayList<>();
        for (BundleCapability cap : caps == null ? List.<BundleCapability>of() : caps) {
            if (cap.getAttributes().get("routes") instanceof List<?> routes) {
                routes.forEach(r -> out.add(String.valueOf(r)));
            }
        }
        return out;
    }

    public synchronized Feature enable(String name) {
        Feature f = feature(name);
        if (disabled.contains(name)) {
            Optional<String> conflict = enabledConflict(features, disabled, name);
            if (conflict.isPresent()) {
                throw ApiException.conflict("feature " + name + " conflicts with feature " + conflict.get()
                        + ", which is enabled (both serve the same" + " paths); disable " + conflict.get() + " first");
            }
        }
        if (disabled.remove(name)) {
            save();
            switching = name;
            try {
                for (Bundle b : bundles(f)) {
                    try {
                        b.start();
                    } catch (BundleException e) {
                        disabled.add(name);
                        save();
                        stopBundles(f);
                        throw new ApiException(
                                409, "CONFLICT", "feature " + name + " could not be started: " + e.getMessage());
                    }
                }
            } finally {
                switching = null;
            }
            LOG.info("feature {} enabled", name);
        }
        return f;
    }

    public synchronized Feature disable(String name) {
        Feature f = feature(name);
        if (disabled.add(name)) {
            save();
            switching = name;
            try {
                stopBundles(f);
            } finally {
                switching = null;
            }
            LOG.info("feature {} disabled", name);
        }
        return f;
    }

    /** The feature being enabled or disabled at this moment, if any; read without the lock the switch holds. */
    Optional<String> switching() {
        return Optional.ofNullable(switching);
    }

    /** The data directory ({@code --data}), whose disk the health view reports. */
    Path dataDirectory() {
        return dataDirectory;
    }

    private Feature feature(String name) {
        Feature f = features.get(name);
        if (f == null) {
            throw ApiException.notFound("no feature named '" + name + "' (features: "
                    + String.join(", ", features.keySet()) + "; the kernel is not a feature)");
        }
        return f;
    }

    List<Bundle> bundles(Feature f) {
        List<Bundle> out = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            if (member(f, b).isPresent()) {
                out.add(b);
            }
        }
        return out;
    }

    private void stopBundles(Feature f) {
        for (Bundle b : bundles(f)) {
            if (member(f, b).map(Feature.Member::api).orElse(false)) {
                continue; // other features' bundles are wired to it, and it runs nothing of its own
            }
            try {
                b.stop();
            } catch (BundleException e) {
                LOG.error("could not stop {} of feature {}", b.getSymbolicName(), f.name(), e);
            }
        }
    }

    /** Publishes the disabled set and the routes its features' bundles declare now to request threads. */
    private void publish() {
        Map<String, List<String>> routes = new TreeMap<>();
        for (String name : disabled) {
            routes.put(name, routes(features.get(name)));
        }
        disabledRoutes = Map.copyOf(routes);
        disabledNow = Set.copyOf(disabled);
    }

    /** Writes the disabled set and publishes it to request threads; called holding the lock. */
    private void save() {
        publish();
        try {
            Files.createDirectories(stateFile.getParent());
            Path tmp = stateFile.resolveSibling("features.json.tmp");
            // "enabled" keeps the features off by default that the operator turned on
            Set<String> enabled = new TreeSet<>();
            features.values().stream()
                    .filter(f -> !f.enabledByDefault() && !disabled.contains(f.name()))
                    .forEach(f -> enabled.add(f.name()));
            JSON.writerWithDefaultPrettyPrinter()
                    .writeValue(tmp.toFile(), Map.of("disabled", disabled, "enabled", enabled));
            Files.move(tmp, stateFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + stateFile + ": " + e.getMessage(), e);
        }
    }
}
