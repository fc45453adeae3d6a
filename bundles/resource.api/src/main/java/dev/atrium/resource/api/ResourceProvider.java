package dev.atrium.resource.api;

import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Provisions and runs resources of one type on one backend. Methods with nothing to do for most backends have a
 * default; every method added to this interface or to a facet later is a default method, so that an added method
 * never breaks a provider built against an earlier version (a minor version of the package, as the baseline checks).
 * <p>
 * Register it as an OSGi service with the properties {@link #TYPE} and {@link #BACKEND} ({@link ResourceProviderType});
 * implement the facet interfaces ({@link KvFacet}, …) its type has on the same object.
 *
 * <p>Calls may come from many threads at once, for different resources and for the same one. Every call gets the
 * resource's {@link ResourceContext}; keep no per-resource state in memory that a restart of the bundle would lose.
 */
@ConsumerType
public interface ResourceProvider {

    /** Service property: the resource type served, one of {@code d1 r2 kv queue vectorize analyticsEngine secretRef} or a new one. */
    String TYPE = "atrium.resource.type";

    /** Service property: the backend's short name ({@code postgres}, {@code blob}, {@code files}, …), 1–40 of {@code [a-z0-9-]}. */
    String BACKEND = "atrium.resource.backend";

    /**
     * What configuration a resource of this provider takes. The core validates a create or update body's
     * {@code config} against it, fills in defaults, and refuses (400) what does not fit, before calling
     * {@link #provision} or {@link #update}. By default none: a resource of this provider takes no configuration.
     */
    default ConfigSchema configSchema() {
        return ConfigSchema.empty();
    }

    /**
     * Creates the backing storage of a new resource ({@code ctx.config()} is validated). Must be idempotent: a
     * provision interrupted by a crash is called again with the same resource id.
     *
     * @return what the provider wants remembered with the resource beyond its config (shown in connection info), or an
     *         empty map
     * @throws ResourceException when it cannot be provisioned; nothing of the resource is kept then
     */
    default Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        return Map.of(); // by default nothing to create: the backend makes a resource's data on its first write
    }

    /**
     * Applies a changed configuration. {@code ctx.config()} is the old one; {@code newConfig} is validated.
     *
     * @throws ResourceException when the change cannot be applied; the old configuration stays
     */
    default void update(ResourceContext ctx, Map<String, Object> newConfig) throws ResourceException {
        // by default nothing to apply: the new configuration is read from the resource on the next call
    }

    /** Removes the resource's data. Called once its rows are deleted; must tolerate data already gone. */
    void deprovision(ResourceContext ctx) throws ResourceException;

    /**
     * How a client or a bound service reaches the resource outside this API (a host, a database name, …), or an empty
     * map when it is reachable only through the API. Never include secrets the caller's permission does not allow:
     * {@code ctx.access()} says what it holds. By default none.
     */
    default Map<String, Object> connectionInfo(ResourceContext ctx) throws ResourceException {
        return Map.of();
    }

    /** Whether the resource's backend answers now. Cheap: the core may call it on every detail request. */
    Health health(ResourceContext ctx);

    /**
     * A health report.
     *
     * @param healthy whether the backend answers
     * @param detail  a short human-readable reason, never a secret
     */
    record Health(boolean healthy, String detail) {

        public static Health ok() {
            return new Health(true, "ok");
        }

        public static Health failing(String detail) {
            return new Health(false, detail);
        }
    }
}
