package dev.atrium.resources.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.resource.api.AnalyticsFacet;
import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.ObjectFacet;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.SecretFacet;
import dev.atrium.resource.api.SqlFacet;
import dev.atrium.resource.api.VectorFacet;
import dev.atrium.resource.api.WorkflowFacet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.Constants;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resource providers that are running now, by type and backend. Providers come and go at run time (a plugin
 * dropped into {@code deploy/}, a bundle stopped or updated): a resource is looked up on every call, never kept.
 */
@Component(service = Providers.class)
public class Providers {

    /** A running provider and its service properties. */
    public record Registered(
            String type, String backend, int ranking, long bundleId, long serviceId, ResourceProvider provider) {}

    private static final Logger LOG = LoggerFactory.getLogger(Providers.class);

    /** The facet each type the core serves routes for needs: a provider without it could answer none of them. */
    static final Map<String, Class<?>> FACETS = Map.of(
            "kv",
            KvFacet.class,
            "r2",
            ObjectFacet.class,
            "d1",
            SqlFacet.class,
            "queue",
            QueueFacet.class,
            "vectorize",
            VectorFacet.class,
            "analyticsEngine",
            AnalyticsFacet.class,
            "secretRef",
            SecretFacet.class,
            "workflow",
            WorkflowFacet.class);

    private final Map<ResourceProvider, Registered> providers = new ConcurrentHashMap<>();

    @Reference(
            service = ResourceProvider.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void add(ResourceProvider provider, Map<String, Object> properties) {
        Object type = properties.get(ResourceProvider.TYPE);
        Object backend = properties.get(ResourceProvider.BACKEND);
        if (!(type instanceof String t && backend instanceof String b && !t.isBlank() && !b.isBlank())) {
            LOG.error(
                    "resource provider {} refused: it has no {} and {} service properties (@ResourceProviderType)",
                    provider.getClass().getName(),
                    ResourceProvider.TYPE,
                    ResourceProvider.BACKEND);
            return;
        }
        Class<?> facet = FACETS.get(t);
        if (facet != null && !facet.isInstance(provider)) {
            LOG.error(
                    "resource provider {} ({}/{}) refused: a {} provider must implement {}",
                    provider.getClass().getName(),
                    t,
                    b,
                    t,
                    facet.getName());
            return;
        }
        Object ranking = properties.get(Constants.SERVICE_RANKING);
        Object bundleId = properties.get(Constants.SERVICE_BUNDLEID);
        Object serviceId = properties.get(Constants.SERVICE_ID);
        providers.put(
                provider,
                new Registered(
                        t,
                        b,
                        ranking instanceof Integer i ? i : 0,
                        bundleId instanceof Long l ? l : Long.MAX_VALUE,
                        serviceId instanceof Long l ? l : Long.MAX_VALUE,
                        provider));
    }

    void remove(ResourceProvider provider) {
        providers.remove(provider);
    }

    /** The provider of {@code type} on {@code backend}, if one is running. */
    public Optional<ResourceProvider> find(String type, String backend) {
        return providers.values().stream()
                .filter(r -> r.type().equals(type) && r.backend().equals(backend))
                .max(Comparator.comparingInt(Registered::ranking))
                .map(Registered::provider);
    }

    /** The provider of {@code type} on {@code backend}, or 503 naming the one that is missing. */
    public ResourceProvider require(String type, String backend) {
        return find(type, backend).orElseThrow(() -> missing(type, backend));
    }

    static ApiException missing(String type, String backend) {
        return ApiException.unavailable(missingMessage(type, backend));
    }

    static String missingMessage(String type, String backend) {
        return "the resource provider " + type + "/" + backend + " (type '" + type + "', backend '" + backend
                + "') is not running; the resource and its data are kept and it works again once that provider is installed";
    }

    /**
     * The backend a new resource of {@code type} gets when the request names none: the highest {@code service.ranking},
     * and among equals the one whose bundle was installed first. The server's own providers are installed at launch, in
     * the launcher's order (PostgreSQL before Redis or NATS), before any plugin, and a bundle keeps its id when it is
     * updated or refreshed: so neither a plugin nor an update of a built-in provider changes the default (a service id
     * would: the provider registers anew after an update). An operator who wants another default gives it a ranking.
     */
    public Optional<String> defaultBackend(String type) {
        return providers.values().stream()
                .filter(r -> r.type().equals(type))
                .max(Comparator.comparingInt(Registered::ranking)
                        .thenComparing(Registered::bundleId, Comparator.reverseOrder())
                        .thenComparing(Registered::serviceId, Comparator.reverseOrder()))
                .map(Registered::backend);
    }

    /** Every running provider, by type then backend. */
    public List<Registered> all() {
        List<Registered> out = new ArrayList<>(providers.values());
        out.sort(Comparator.comparing(Registered::type).thenComparing(Registered::backend));
        return out;
    }
}
