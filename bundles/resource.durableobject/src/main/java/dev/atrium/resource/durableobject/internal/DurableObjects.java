package dev.atrium.resource.durableobject.internal;

import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Component;

/**
 * durableObject resources (backend {@code workerd}): a namespace of Durable Objects of the class {@code class_name},
 * which the code of the service it is bound to exports. The service's runtime runs the objects (workerd's own Durable
 * Object support) and keeps their storage in this resource's directory ({@link ResourceContext#dataDirectory()}), so
 * the objects follow the resource, not a deployment; deleting the resource deletes that directory (the core does) and
 * with it every object's data. The provider itself stores nothing: the resource's row (its config) is all there is.
 * A durableObject resource is bound to one service at a time (the core refuses a second with 409).
 */
@Component(service = ResourceProvider.class)
@ResourceProviderType(type = "durableObject", backend = "workerd")
public class DurableObjects implements ResourceProvider {

    static final String CLASS_NAME = "class_name";
    /** A JavaScript identifier (ASCII): what an exported class can be named and workerd's configuration accepts. */
    static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]{0,199}");

    @Override
    public ConfigSchema configSchema() {
        return ConfigSchema.builder()
                .string(
                        CLASS_NAME,
                        "the Durable Object class the bound service's code exports (a JavaScript identifier)",
                        true,
                        java.util.List.of(),
                        null)
                .build();
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        check(ctx.config());
        return Map.of();
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) throws ResourceException {
        check(newConfig);
    }

    /** Nothing of the provider's own: the objects' data is in the resource's directory, which the core removes. */
    @Override
    public void deprovision(ResourceContext ctx) {}

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("backend", "workerd");
        info.put(CLASS_NAME, ctx.config().get(CLASS_NAME));
        info.put(
                "storage",
                "per resource: every object's data is kept with this resource (across deployments and restarts) and deleted with it");
        info.put(
                "usable_through",
                "bindings: env.<binding> is a DurableObjectNamespace of class_name, exported by the bound service's code");
        info.put("bound_services_at_most", 1);
        return info;
    }

    @Override
    public Health health(ResourceContext ctx) {
        return Health.ok();
    }

    static void check(Map<String, Object> config) throws ResourceException {
        Object name = config.get(CLASS_NAME);
        if (!(name instanceof String s) || !IDENTIFIER.matcher(s).matches()) {
            throw ResourceException.badInput(
                    "class_name must be a JavaScript identifier (letters, digits, '_' or '$', not starting with a digit)"
                            + ", the name of a class the bound service's code exports");
        }
    }
}
