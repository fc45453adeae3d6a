package dev.atrium.resources.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.ResourceProvider;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Constants;

class ProvidersTest {

    /** A kv provider: a ResourceProvider that is a KvFacet too. */
    private static ResourceProvider provider() {
        return provider(ResourceProvider.class, KvFacet.class);
    }

    private static ResourceProvider provider(Class<?>... interfaces) {
        return (ResourceProvider) Proxy.newProxyInstance(
                ProvidersTest.class.getClassLoader(), interfaces, (proxy, method, args) -> switch (method.getName()) {
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> null;
                });
    }

    private static Map<String, Object> props(String backend, long bundleId, long serviceId, Integer ranking) {
        Map<String, Object> p = new HashMap<>(Map.of(
                ResourceProvider.TYPE,
                "kv",
                ResourceProvider.BACKEND,
                backend,
                Constants.SERVICE_BUNDLEID,
                bundleId,
                Constants.SERVICE_ID,
                serviceId));
        if (ranking != null) {
            p.put(Constants.SERVICE_RANKING, ranking);
        }
        return p;
    }

    @Test
    void anUpdateOfTheBuiltInProviderKeepsItTheDefaultBackend() {
        Providers providers = new Providers();
        ResourceProvider postgres = provider();
        providers.add(postgres, props("postgres", 40, 100, null));
        providers.add(provider(), props("redis", 41, 101, null));
        providers.add(provider(), props("files", 90, 150, null)); // a plugin dropped into deploy/
        assertEquals(Optional.of("postgres"), providers.defaultBackend("kv"));

        // updated or refreshed: the same bundle registers its provider again, with a new service id
        providers.remove(postgres);
        assertEquals(Optional.of("redis"), providers.defaultBackend("kv"));
        providers.add(provider(), props("postgres", 40, 200, null));
        assertEquals(Optional.of("postgres"), providers.defaultBackend("kv"));
    }

    @Test
    void aRankingChoosesTheDefaultBackend() {
        Providers providers = new Providers();
        providers.add(provider(), props("postgres", 40, 100, null));
        providers.add(provider(), props("redis", 41, 101, 1));
        assertEquals(Optional.of("redis"), providers.defaultBackend("kv"));
        assertEquals(Optional.empty(), providers.defaultBackend("queue"));
    }

    @Test
    void aProviderWithoutItsTypesFacetOrWithoutItsPropertiesIsRefusedWhenItRegisters() {
        Providers providers = new Providers();
        providers.add(provider(ResourceProvider.class, QueueFacet.class), props("wrong", 40, 100, null));
        assertEquals(Optional.empty(), providers.find("kv", "wrong"), "a kv provider that is no KvFacet");
        providers.add(provider(), Map.of(ResourceProvider.BACKEND, "nameless"));
        assertEquals(0, providers.all().size(), "no type property");
        Map<String, Object> queue = props("postgres", 41, 101, null);
        queue.put(ResourceProvider.TYPE, "queue");
        providers.add(provider(ResourceProvider.class, QueueFacet.class), queue);
        assertEquals("queue", providers.all().get(0).type(), "a queue provider is a QueueFacet");
        Map<String, Object> novel = props("files", 42, 102, null);
        novel.put(ResourceProvider.TYPE, "graph");
        providers.add(provider(ResourceProvider.class), novel);
        assertEquals(2, providers.all().size(), "a type the core has no routes for needs no facet");
    }
}
