package dev.atrium.resource.api;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The configuration a provider's resources take: a flat object of named fields, each a string, an integer or a
 * boolean, described the way a JSON Schema would ({@link #toJson()} is served to clients). The core validates every
 * create and update body against it: unknown fields, wrong types, missing required fields and values outside the
 * bounds are refused with 400 before the provider is called.
 *
 * <p>A {@linkplain Builder#secret secret} field is write-only: the provider gets its value in {@link
 * ResourceProvider#provision} and {@link ResourceProvider#update} and keeps it itself (encrypted); the core never stores
 * it with the resource and never shows it, so later calls' {@link ResourceContext#config()} lacks it.
 *
 * <pre>
 * ConfigSchema.builder()
 *     .integer("max_value_bytes", "largest value accepted", 1, 1_048_576, 65_536)
 *     .string("eviction", "what happens when full", false, List.of("reject", "oldest"), "reject")
 *     .build();
 * </pre>
 */
public final class ConfigSchema {

    /** A field's JSON type. */
    public enum Type {
        STRING,
        INTEGER,
        BOOLEAN
    }

    /**
     * One field.
     *
     * @param name        the key in the config object
     * @param type        its JSON type
     * @param description one line for the client
     * @param required    whether it must be given (a field with a default is never required)
     * @param defaultValue the value used when it is absent, or null
     * @param min         for integers the smallest value, for strings the shortest length; null for none
     * @param max         for integers the largest value, for strings the longest length; null for none
     * @param allowed     for strings the only values accepted, or an empty list for any
     */
    public record Field(
            String name,
            Type type,
            String description,
            boolean required,
            Object defaultValue,
            Long min,
            Long max,
            List<String> allowed) {

        public Field {
            allowed = allowed == null ? List.of() : List.copyOf(allowed);
        }
    }

    private static final ConfigSchema EMPTY = new ConfigSchema(List.of(), Set.of());

    private final List<Field> fields;
    private final Set<String> secrets;

    private ConfigSchema(List<Field> fields, Set<String> secrets) {
        this.fields = List.copyOf(fields);
        this.secrets = Set.copyOf(secrets);
    }

    /** A schema that takes no configuration at all. */
    public static ConfigSchema empty() {
        return EMPTY;
    }

    public static Builder builder() {
        return new Builder();
    }

    public List<Field> fields() {
        return fields;
    }

    /**
     * The names of the write-only fields.
     *
     * @since 1.1
     */
    public Set<String> secretFields() {
        return secrets;
    }

    /**
     * {@code config} without its write-only fields: what the core stores and shows.
     *
     * @since 1.1
     */
    public Map<String, Object> withoutSecrets(Map<String, ?> config) {
        Map<String, Object> out = new LinkedHashMap<>();
        config.forEach((k, v) -> {
            if (!secrets.contains(k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /**
     * Checks {@code input} and returns it with defaults filled in.
     *
     * @param input the client's config object (null for none)
     * @throws ResourceException {@link ResourceException.Kind#BAD_INPUT} naming the first field that does not fit
     */
    public Map<String, Object> validate(Map<String, ?> input) throws ResourceException {
        Map<String, ?> in = input == null ? Map.of() : input;
        for (String key : in.keySet()) {
            if (fields.stream().noneMatch(f -> f.name().equals(key))) {
                throw ResourceException.badInput("config has an unknown field '" + key + "'"
                        + (fields.isEmpty()
                                ? "; this type takes no config"
                                : "; known: "
                                        + String.join(
                                                ", ",
                                                fields.stream().map(Field::name).toList())));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Field f : fields) {
            Object v = in.get(f.name());
            if (v == null) {
                if (f.required()) {
                    throw ResourceException.badInput("config." + f.name() + " is required");
                }
                if (f.defaultValue() != null) {
                    out.put(f.name(), f.defaultValue());
                }
                continue;
            }
            out.put(f.name(), check(f, v));
        }
        return out;
    }

    private static Object check(Field f, Object v) throws ResourceException {
        String where = "config." + f.name();
        switch (f.type()) {
            case BOOLEAN -> {
                if (!(v instanceof Boolean)) {
                    throw ResourceException.badInput(where + " must be a boolean");
                }
                return v;
            }
            case INTEGER -> {
                if (!(v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte)) {
                    throw ResourceException.badInput(where + " must be an integer");
                }
                long n = ((Number) v).longValue();
                if ((f.min() != null && n < f.min()) || (f.max() != null && n > f.max())) {
                    throw ResourceException.badInput(where + " must be between " + f.min() + " and " + f.max());
                }
                return n;
            }
            default -> {
                if (!(v instanceof String s)) {
                    throw ResourceException.badInput(where + " must be a string");
                }
                if ((f.min() != null && s.length() < f.min()) || (f.max() != null && s.length() > f.max())) {
                    throw ResourceException.badInput(where + " must be " + f.min() + " to " + f.max() + " characters");
                }
                if (!f.allowed().isEmpty() && !f.allowed().contains(s)) {
                    throw ResourceException.badInput(where + " must be one of " + String.join(", ", f.allowed()));
                }
                return s;
            }
        }
    }

    /**
     * A resource's configuration ({@link ResourceContext#config()}) as a record of the provider's. Each component takes
     * the field named as the component is, written in snake_case ({@code maxDeliveries} takes {@code max_deliveries});
     * a field the stored configuration lacks (it was stored before this schema had the field) takes the schema's
     * default. Components are of the types a schema validates: {@code String}, {@code long}, {@code int},
     * {@code boolean}, or their boxes. A field with neither value nor default is {@code null}; for a primitive
     * component that is the provider's mistake, an {@code IllegalArgumentException}.
     *
     * @since 1.7
     */
    public <C extends Record> C read(Map<String, ?> config, Class<C> type) {
        RecordShape shape = RECORD_SHAPES.get(type);
        Object[] values = new Object[shape.fields().length];
        for (int i = 0; i < values.length; i++) {
            String field = shape.fields()[i];
            Object v = config.get(field);
            if (v == null) {
                v = fields.stream()
                        .filter(f -> f.name().equals(field))
                        .map(Field::defaultValue)
                        .findFirst()
                        .orElse(null);
            }
            values[i] = value(field, v, shape.types()[i]);
        }
        try {
            return type.cast(shape.constructor().newInstance(values));
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot make " + type.getName() + " of a configuration", e);
        }
    }

    /** A record's fields and canonical constructor, found once per class (kept with the class, not past it). */
    private record RecordShape(String[] fields, Class<?>[] types, Constructor<?> constructor) {}

    private static final ClassValue<RecordShape> RECORD_SHAPES = new ClassValue<>() {
        @Override
        protected RecordShape computeValue(Class<?> type) {
            RecordComponent[] components = type.getRecordComponents();
            if (components == null) {
                throw new IllegalArgumentException(type.getName() + " is not a record");
            }
            String[] fields = new String[components.length];
            Class<?>[] types = new Class<?>[components.length];
            for (int i = 0; i < components.length; i++) {
                fields[i] = snakeCase(components[i].getName());
                types[i] = components[i].getType();
            }
            try {
                Constructor<?> constructor = type.getDeclaredConstructor(types);
                constructor.setAccessible(true);
                return new RecordShape(fields, types, constructor);
            } catch (ReflectiveOperationException e) {
                throw new IllegalArgumentException("cannot make " + type.getName() + " of a configuration", e);
            }
        }
    };

    private static Object value(String field, Object v, Class<?> type) {
        if (v == null) {
            if (type.isPrimitive()) {
                throw new IllegalArgumentException(
                        "config." + field + " is absent, and " + type + " cannot be null: give it a default");
            }
            return null;
        }
        if ((type == long.class || type == Long.class) && v instanceof Number n) {
            return n.longValue();
        }
        if ((type == int.class || type == Integer.class) && v instanceof Number n) {
            return Math.toIntExact(n.longValue());
        }
        if ((type == boolean.class || type == Boolean.class) && v instanceof Boolean) {
            return v;
        }
        if (type == String.class && v instanceof String) {
            return v;
        }
        throw new IllegalArgumentException(
                "config." + field + " is a " + v.getClass().getSimpleName() + ", not a " + type.getSimpleName());
    }

    static String snakeCase(String name) {
        StringBuilder out = new StringBuilder(name.length() + 4);
        for (int i = 0; i < name.length(); i++) {
            char ch = name.charAt(i);
            if (Character.isUpperCase(ch)) {
                out.append('_').append(Character.toLowerCase(ch));
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }

    /** The schema as a JSON-Schema-like object: {@code {type: object, properties: {...}, required: [...]}}. */
    public Map<String, Object> toJson() {
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> required = new ArrayList<>();
        for (Field f : fields) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("type", f.type().name().toLowerCase(java.util.Locale.ROOT));
            p.put("description", f.description());
            if (f.defaultValue() != null) {
                p.put("default", f.defaultValue());
            }
            boolean integer = f.type() == Type.INTEGER;
            if (f.min() != null) {
                p.put(integer ? "minimum" : "minLength", f.min());
            }
            if (f.max() != null) {
                p.put(integer ? "maximum" : "maxLength", f.max());
            }
            if (!f.allowed().isEmpty()) {
                p.put("enum", f.allowed());
            }
            if (secrets.contains(f.name())) {
                p.put("writeOnly", true);
            }
            properties.put(f.name(), p);
            if (f.required()) {
                required.add(f.name());
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "object");
        m.put("properties", properties);
        m.put("required", required);
        m.put("additionalProperties", false);
        return m;
    }

    /** Builds a schema field by field. */
    public static final class Builder {
        private final List<Field> fields = new ArrayList<>();
        private final Set<String> secrets = new LinkedHashSet<>();

        private Builder() {}

        /**
         * A write-only string field of 1 to {@code maxLength} characters (an API key, a password): given on create and
         * update, handed to the provider, never stored by the core nor shown ({@code writeOnly} in {@link #toJson()}).
         *
         * @since 1.1
         */
        public Builder secret(String name, String description, boolean required, int maxLength) {
            fields.add(new Field(name, Type.STRING, description, required, null, 1L, (long) maxLength, List.of()));
            secrets.add(name);
            return this;
        }

        /** A string field; {@code allowed} empty for any value, {@code defaultValue} null for none (then it is optional unless {@code required}). */
        public Builder string(
                String name, String description, boolean required, List<String> allowed, String defaultValue) {
            fields.add(new Field(
                    name,
                    Type.STRING,
                    description,
                    required && defaultValue == null,
                    defaultValue,
                    0L,
                    1000L,
                    allowed));
            return this;
        }

        /** An optional integer field between {@code min} and {@code max}, {@code defaultValue} when absent. */
        public Builder integer(String name, String description, long min, long max, long defaultValue) {
            fields.add(new Field(name, Type.INTEGER, description, false, defaultValue, min, max, List.of()));
            return this;
        }

        /** An optional boolean field, {@code defaultValue} when absent. */
        public Builder bool(String name, String description, boolean defaultValue) {
            fields.add(new Field(name, Type.BOOLEAN, description, false, defaultValue, null, null, List.of()));
            return this;
        }

        public ConfigSchema build() {
            return new ConfigSchema(fields, secrets);
        }
    }
}
