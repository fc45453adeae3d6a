package dev.atrium.config.internal;

import java.nio.file.Path;
import java.util.Dictionary;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationPlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ConfigAdmin plugin: as a configuration of an Atrium PID is delivered to its component, each property the
 * operator's configuration leaves unset (absent or blank) takes its value from the environment or the framework
 * properties ({@link Settings}), converted to the type the component's configuration record declares. A blank or
 * malformed variable counts as unset, so the component's own default applies. The values are computed at delivery
 * and never stored: ConfigAdmin persists only what the operator wrote. Beside each value taken from a source it puts the
 * private property {@code .atrium.source.<property>} naming that source ({@link #SOURCE_PREFIX}): the console's
 * Configuration view reads it from ConfigAdmin's processed properties, so this table stays the only one that knows
 * the names; a component ignores it (DS does not register properties that start with a dot).
 */
final class EnvironmentDefaults implements ConfigurationPlugin {

    /** The private property naming where a value came from: this prefix and the property's name. */
    static final String SOURCE_PREFIX = ".atrium.source.";

    private final Map<String, List<Setting>> settings;
    private final UnaryOperator<String> environment;
    private final UnaryOperator<String> properties;

    EnvironmentDefaults(
            Map<String, List<Setting>> settings, UnaryOperator<String> environment, UnaryOperator<String> properties) {
        this.settings = settings;
        this.environment = environment;
        this.properties = properties;
    }

    @Override
    public void modifyConfiguration(ServiceReference<?> reference, Dictionary<String, Object> configuration) {
        List<Setting> of = settings.get(String.valueOf(configuration.get(Constants.SERVICE_PID)));
        if (of == null) {
            return;
        }
        for (Setting setting : of) {
            Object operator = configuration.get(setting.property());
            if (operator != null && !(operator instanceof String s && s.isBlank())) {
                continue;
            }
            Resolved resolved = resolveWithSource(setting);
            if (resolved.value() != null) {
                configuration.put(setting.property(), resolved.value());
            }
            if (resolved.source() != null) {
                configuration.put(
                        SOURCE_PREFIX + setting.property(), resolved.source().toString());
            }
        }
    }

    /** A value and the source it came from (null: the fallback or nothing). */
    record Resolved(Object value, Setting.Source source) {}

    /** The typed value of the first source that is set and not blank, else the fallback, else null. */
    Object resolve(Setting setting) {
        return resolveWithSource(setting).value();
    }

    private Resolved resolveWithSource(Setting setting) {
        Object fallback = setting.fallback() == null ? null : convert(setting.kind(), setting.fallback());
        for (Setting.Source source : setting.sources()) {
            String raw = source.environment() ? environment.apply(source.name()) : properties.apply(source.name());
            if (raw == null || raw.isBlank()) {
                continue;
            }
            try {
                return new Resolved(convert(setting.kind(), raw.trim()), source);
            } catch (IllegalArgumentException e) {
                log().warn(
                                "{}='{}' is not {}; {} keeps its default",
                                source,
                                raw,
                                setting.kind().expected,
                                setting.property());
                return new Resolved(fallback, null);
            }
        }
        return new Resolved(fallback, null);
    }

    /** Not a static field: this class loads at start level 1, before the logging provider, and SLF4J binds once. */
    private static Logger log() {
        return LoggerFactory.getLogger(EnvironmentDefaults.class);
    }

    private static Object convert(Setting.Kind kind, String text) {
        return switch (kind) {
            case STRING -> text;
            case INTEGER -> Integer.valueOf(text);
            case LONG -> Long.valueOf(text);
            case BOOLEAN -> {
                if (!text.equalsIgnoreCase("true") && !text.equalsIgnoreCase("false")) {
                    throw new IllegalArgumentException("not a boolean");
                }
                yield Boolean.valueOf(text);
            }
            case DIRECTORY -> Path.of(text).toAbsolutePath().normalize().toString();
        };
    }
}
