package dev.atrium.operations.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.AuditLog;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Dictionary;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PUT;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationPlugin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The operator's configuration ({@code /admin/config}): every Atrium PID with its properties and where each value
 * comes from, and edits written as the operator's own file in {@code <data>/deploy/}, which FileInstall applies.
 * A value's source is the operator's file (what ConfigAdmin stores), else the environment or a framework property
 * (named by dev.atrium.config's plugin in the processed properties), else the component's default (MetaType).
 */
@Component(
        service = ConfigResource.class,
        configurationPid = "dev.atrium.operations",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@KernelResource
@javax.ws.rs.Path("/admin/config")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@OperatorOnly
public class ConfigResource {

    /** What a secret's value is shown as; sent back unchanged, it keeps the secret. */
    static final String MASK = "••••";
    /** The private property dev.atrium.config's plugin names a value's source with (EnvironmentDefaults). */
    static final String SOURCE_PREFIX = ".atrium.source.";
    /** dev.atrium.config's plugin, which takes values from the environment and the framework properties. */
    private static final String ENVIRONMENT_PLUGIN = "(config.plugin.id=dev.atrium.config)";

    private static final String FILE_PROPERTY = "felix.fileinstall.filename";
    private static final Set<String> BOOKKEEPING =
            Set.of("service.pid", "service.factoryPid", "service.bundleLocation", FILE_PROPERTY);
    private static final Pattern PID = Pattern.compile("dev\\.atrium\\.[A-Za-z0-9._-]{1,200}");
    /** How long an answer waits for FileInstall (it polls every 0.5 s) and ConfigAdmin to take a change. */
    private static final long APPLY_WAIT_MILLIS = 15_000;

    private final ConfigurationAdmin admin;
    private final AuditLog audit;
    private final BundleContext context;
    private final Path data;
    private final Path deploy;
    /**
     * Held by a change from reading ConfigAdmin until it holds what was written (or the wait ends): a change merges
     * with what ConfigAdmin stores, so one must not read it while another's file is still on its way there.
     */
    private final Object changes = new Object();

    @Activate
    public ConfigResource(
            @Reference ConfigurationAdmin admin,
            @Reference AuditLog audit,
            BundleContext context,
            FeatureSwitch.Config config) {
        this.admin = admin;
        this.audit = audit;
        this.context = context;
        this.data = Path.of(config.dataDirectory()).toAbsolutePath().normalize();
        this.deploy = data.resolve("deploy");
    }

    @GET
    @JsonShape(OperationsJson.Configs.class)
    public Map<String, Object> list() {
        Map<String, MetaTypes.Pid> described = MetaTypes.read(context.getBundles());
        Set<String> pids = new java.util.TreeSet<>(described.keySet());
        for (Configuration c : configurations("(service.pid=dev.atrium.*)")) {
            if (c.getFactoryPid() == null) {
                pids.add(c.getPid());
            }
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (String pid : pids) {
            out.add(view(pid, described.get(pid), current(pid)));
        }
        return Map.of("configs", out);
    }

    @GET
    @javax.ws.rs.Path("{pid}")
    @JsonShape(OperationsJson.OneConfig.class)
    public Map<String, Object> one(@PathParam("pid") String pid) {
        MetaTypes.Pid described = described(pid);
        Current current = current(pid);
        if (described == null && current.configuration() == null) {
            throw notFound(pid);
        }
        return Map.of("config", view(pid, described, current));
    }

    @PUT
    @javax.ws.rs.Path("{pid}")
    @JsonShape(OperationsJson.OneConfig.class)
    public Response put(@PathParam("pid") String pid, @JsonShape(OperationsJson.ConfigInput.class) JsonNode body) {
        synchronized (changes) {
            return change(pid, body);
        }
    }

    private Response change(String pid, JsonNode body) {
        MetaTypes.Pid described = described(pid);
        Current current = current(pid);
        if (described == null) {
            if (current.configuration() == null) {
                throw notFound(pid);
            }
            throw ApiException.badRequest(
                    pid + " has no description of its properties: edit its file in " + deploy + " by hand");
        }
        JsonNode properties = body == null ? null : body.get("properties");
        if (properties == null || !properties.isObject()) {
            throw ApiException.badRequest("the body must be {\"properties\": {name: value, …}}");
        }
        Map<String, Object> merged = new LinkedHashMap<>(current.stored());
        List<String> set = new ArrayList<>();
        List<String> reset = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = properties.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String name = field.getKey();
            MetaTypes.Attribute attribute = described.attributes().get(name);
            if (attribute == null) {
                throw ApiException.badRequest("unknown property '" + name + "' of " + pid + " (its properties: "
                        + String.join(", ", described.attributes().keySet()) + ")");
            }
            JsonNode value = field.getValue();
            boolean maskedSecret =
                    attribute.secret() && value.isTextual() && value.asText().equals(MASK);
            if (value.isNull()) {
                merged.remove(name);
                reset.add(name);
            } else if (!maskedSecret) { // the masked secret sent back is kept as it is
                merged.put(name, ConfigValues.convert(pid, attribute, value));
                set.add(name);
            }
        }
        if (!set.isEmpty() || !reset.isEmpty()) {
            write(pid, current, merged);
            audit.record(AuditLog.OPERATOR, "config_changed", pid, detail(set, reset));
        }
        return applied(pid, described, merged, current);
    }

    @DELETE
    @javax.ws.rs.Path("{pid}/{property}")
    @JsonShape(OperationsJson.OneConfig.class)
    public Response resetProperty(@PathParam("pid") String pid, @PathParam("property") String property) {
        synchronized (changes) {
            return resetOne(pid, property);
        }
    }

    private Response resetOne(String pid, String property) {
        MetaTypes.Pid described = described(pid);
        Current current = current(pid);
        boolean known = (described != null && described.attributes().containsKey(property))
                || current.stored().containsKey(property);
        if (!known) {
            if (described == null && current.configuration() == null) {
                throw notFound(pid);
            }
            throw ApiException.notFound("no property '" + property + "' of " + pid);
        }
        Map<String, Object> merged = new LinkedHashMap<>(current.stored());
        if (merged.remove(property) != null) {
            write(pid, current, merged);
            audit.record(AuditLog.OPERATOR, "config_changed", pid, detail(List.of(), List.of(property)));
        }
        return applied(pid, described, merged, current);
    }

    @DELETE
    @javax.ws.rs.Path("{pid}")
    @JsonShape(OperationsJson.OneConfig.class)
    public Response reset(@PathParam("pid") String pid) {
        synchronized (changes) {
            return resetAll(pid);
        }
    }

    private Response resetAll(String pid) {
        MetaTypes.Pid described = described(pid);
        Current current = current(pid);
        if (described == null && current.configuration() == null) {
            throw notFound(pid);
        }
        if (!current.stored().isEmpty() || operatorFile(current) != null) {
            write(pid, current, Map.of());
            audit.record(
                    AuditLog.OPERATOR,
                    "config_changed",
                    pid,
                    detail(List.of(), List.copyOf(current.stored().keySet())));
        }
        return applied(pid, described, Map.of(), current);
    }

    /** What ConfigAdmin has for a PID now: the operator's properties, and the processed ones (with the plugin's). */
    record Current(Configuration configuration, Map<String, Object> stored, Map<String, Object> processed, Path file) {}

    private Current current(String pid) {
        if (!PID.matcher(pid).matches()) {
            throw notFound(pid);
        }
        for (Configuration c : configurations("(service.pid=" + pid + ")")) {
            Dictionary<String, Object> stored;
            Dictionary<String, Object> processed;
            try {
                stored = c.getProperties();
                ServiceReference<ConfigurationAdmin> reference = context.getServiceReference(ConfigurationAdmin.class);
                processed = reference == null ? stored : c.getProcessedProperties(reference);
            } catch (IllegalStateException deleted) {
                continue;
            }
            Object file = stored == null ? null : stored.get(FILE_PROPERTY);
            return new Current(c, operatorProperties(stored), map(processed), file == null ? null : path(file));
        }
        return new Current(null, Map.of(), Map.of(), null);
    }

    private List<Configuration> configurations(String filter) {
        try {
            Configuration[] found = admin.listConfigurations(filter);
            return found == null ? List.of() : List.of(found);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InvalidSyntaxException e) {
            throw ApiException.badRequest("not a PID");
        }
    }

    private MetaTypes.Pid described(String pid) {
        if (!PID.matcher(pid).matches()) {
            throw notFound(pid);
        }
        return MetaTypes.read(context.getBundles()).get(pid);
    }

    private Map<String, Object> view(String pid, MetaTypes.Pid described, Current current) {
        Set<String> names = new LinkedHashSet<>();
        if (described != null) {
            names.addAll(described.attributes().keySet());
        }
        names.addAll(current.stored().keySet());
        current.processed().keySet().stream()
                .filter(k -> k.startsWith(SOURCE_PREFIX))
                .map(k -> k.substring(SOURCE_PREFIX.length()))
                .forEach(names::add);
        List<Map<String, Object>> properties = new ArrayList<>();
        for (String name : names) {
            MetaTypes.Attribute attribute =
                    described == null ? null : described.attributes().get(name);
            properties.add(property(name, attribute, current));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pid", pid);
        m.put("name", described == null ? null : described.name());
        m.put("description", described == null || described.description().isEmpty() ? null : described.description());
        Path file = operatorFile(current);
        m.put("file", file == null ? null : file.toString());
        m.put("properties", properties);
        return m;
    }

    private static Map<String, Object> property(String name, MetaTypes.Attribute attribute, Current current) {
        boolean secret = attribute != null ? attribute.secret() : ConfigValues.secretName(name);
        Object defaultValue = attribute == null ? null : ConfigValues.typedDefault(attribute);
        String source;
        String from;
        Object value;
        if (current.stored().containsKey(name)) {
            source = "operator";
            from = current.file() == null ? "ConfigAdmin" : current.file().toString();
            value = current.stored().get(name);
        } else if (current.processed().containsKey(SOURCE_PREFIX + name)) {
            source = "environment";
            from = String.valueOf(current.processed().get(SOURCE_PREFIX + name));
            value = current.processed().get(name);
        } else {
            source = "default";
            from = null;
            value = current.processed().containsKey(name) ? current.processed().get(name) : defaultValue;
        }
        value = ConfigValues.json(value);
        boolean set = value != null && !"".equals(value);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("label", attribute == null ? null : attribute.name());
        m.put("type", attribute == null ? null : attribute.type());
        m.put("multiple", attribute != null && attribute.cardinality() != 0);
        m.put("description", attribute == null || attribute.description().isEmpty() ? null : attribute.description());
        Object shownDefault = ConfigValues.json(defaultValue);
        m.put("default", secret && shownDefault != null && !"".equals(shownDefault) ? MASK : shownDefault);
        m.put("value", secret ? (set ? MASK : null) : value);
        m.put("secret", secret);
        m.put("set", set);
        m.put("source", source);
        m.put("from", from);
        return m;
    }

    /** The operator's file of a PID in the deploy directory, if it has one. */
    private Path operatorFile(Current current) {
        Path file = current.file();
        return file != null && deploy.equals(file.getParent()) && Files.exists(file) ? file : null;
    }

    /**
     * Writes the operator's properties of a PID to its file (the one it has, else {@code <pid>.config}), atomically:
     * FileInstall never reads half a file. No properties: the file is deleted, and the PID returns to the
     * environment and the defaults.
     */
    private void write(String pid, Current current, Map<String, Object> properties) {
        Path existing = operatorFile(current);
        Path target = existing != null ? existing : deploy.resolve(pid + ".config");
        try {
            if (properties.isEmpty()) {
                Files.deleteIfExists(target);
                return;
            }
            Files.createDirectories(deploy);
            // beside deploy/, not in it: FileInstall would take a file appearing there for a bundle
            Path temporary = Files.createTempFile(data, "." + pid + "-", ".tmp");
            try {
                if (target.getFileName().toString().endsWith(".cfg")) {
                    try (OutputStream out = Files.newOutputStream(temporary)) {
                        TypedConfigFormat.cfg(properties).store(out, null);
                    }
                } else {
                    Files.writeString(temporary, TypedConfigFormat.config(properties), StandardCharsets.UTF_8);
                }
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the operator's file " + target + " could not be written", e);
        }
    }

    /**
     * The answer to a change, once ConfigAdmin holds what was {@code written} (200), else when the wait is over (202).
     * Nothing written deletes the file, and FileInstall then deletes the configuration, which dev.atrium.config makes
     * again, empty, when the environment sets any of the PID's properties: until it has, the view would call every
     * value a default, so such a PID is held until its configuration exists again.
     */
    private Response applied(String pid, MetaTypes.Pid described, Map<String, Object> written, Current before) {
        Map<String, Object> expected = ConfigValues.comparable(written);
        boolean madeAgain = written.isEmpty() && before.configuration() != null && environmentSets(pid);
        long deadline = System.nanoTime() + APPLY_WAIT_MILLIS * 1_000_000L;
        Current current = current(pid);
        while (!holds(current, expected, madeAgain) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            current = current(pid);
        }
        boolean done = holds(current, expected, madeAgain);
        Map<String, Object> view = view(pid, described, current);
        return Response.status(done ? 200 : 202).entity(Map.of("config", view)).build();
    }

    /**
     * Whether the environment or the framework properties set any property of the PID: asks dev.atrium.config's plugin
     * to process a configuration that holds the PID alone and looks for the sources it names. A configuration's own
     * processed properties cannot tell, since the plugin leaves alone every property the operator set: a reset of the
     * only property the environment also sets showed that property's default, not the environment's value.
     */
    private boolean environmentSets(String pid) {
        ServiceReference<ConfigurationAdmin> target = context.getServiceReference(ConfigurationAdmin.class);
        Collection<ServiceReference<ConfigurationPlugin>> plugins;
        try {
            plugins = context.getServiceReferences(ConfigurationPlugin.class, ENVIRONMENT_PLUGIN);
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        for (ServiceReference<ConfigurationPlugin> reference : plugins) {
            ConfigurationPlugin plugin = context.getService(reference);
            if (plugin == null) {
                continue;
            }
            try {
                Map<String, Object> probe = new LinkedHashMap<>(Map.of(Constants.SERVICE_PID, pid));
                plugin.modifyConfiguration(target, FrameworkUtil.asDictionary(probe));
                if (probe.keySet().stream().anyMatch(k -> k.startsWith(SOURCE_PREFIX))) {
                    return true;
                }
            } finally {
                context.ungetService(reference);
            }
        }
        return false;
    }

    private static boolean holds(Current current, Map<String, Object> expected, boolean madeAgain) {
        return ConfigValues.comparable(current.stored()).equals(expected)
                && (!madeAgain || current.configuration() != null);
    }

    private static String detail(List<String> set, List<String> reset) {
        List<String> parts = new ArrayList<>();
        if (!set.isEmpty()) {
            parts.add("set " + String.join(", ", set));
        }
        if (!reset.isEmpty()) {
            parts.add("reset " + String.join(", ", reset));
        }
        return parts.isEmpty() ? "nothing changed" : String.join("; ", parts);
    }

    private static ApiException notFound(String pid) {
        return ApiException.notFound("no configuration " + pid);
    }

    private static Map<String, Object> operatorProperties(Dictionary<String, Object> stored) {
        Map<String, Object> out = new TreeMap<>();
        map(stored).forEach((k, v) -> {
            if (!BOOKKEEPING.contains(k) && !k.startsWith(".")) {
                out.put(k, v);
            }
        });
        return out;
    }

    private static Map<String, Object> map(Dictionary<String, Object> dictionary) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (dictionary != null) {
            for (Enumeration<String> keys = dictionary.keys(); keys.hasMoreElements(); ) {
                String key = keys.nextElement();
                out.put(key, dictionary.get(key));
            }
        }
        return out;
    }

    private static Path path(Object file) {
        String text = String.valueOf(file);
        try {
            return text.startsWith("file:") ? Path.of(URI.create(text)) : Path.of(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
