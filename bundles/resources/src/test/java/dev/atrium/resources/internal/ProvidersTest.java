package dev.atrium.resources.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.osgi.framework.Constants;

import dev.atrium.resource.api.ResourceProvider;

class ProvidersTest {

    private static ResourceProvider provider() {
        return (ResourceProvider) Proxy.newProxyInstance(ProvidersTest.class.getClassLoader(), new Class<?>[] { ResourceProvider.class },
                (proxy, method, args) -> switch (method.getName()) {
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> null;
                });
    }

    private static Map<String, Object> props(String backend, long bundleId, long serviceId, Integer ranking) {
        Map<String, Object> p = new HashMap<>(Map.of(ResourceProvider.TYPE, "kv", ResourceProvider.BACKEND, backend,
                Constants.SERVICE_BUNDLEID, bundleId, Constants.SERVICE_ID, serviceId));
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
}
