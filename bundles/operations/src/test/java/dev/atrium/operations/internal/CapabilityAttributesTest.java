package dev.atrium.operations.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRevision;

/** What operations reads from installed bundles: declared routes, the kernel marker, and the Maven descriptor. */
class CapabilityAttributesTest {

    @Test
    void aBundlesRoutesAreTheTypedListOfItsAtriumCapability() throws Exception {
        Bundle memories = bundle(
                Map.of(
                        "atrium.capability",
                        List.of(capability(Map.of(
                                "atrium.capability",
                                "memories",
                                "routes",
                                List.of("/api/spaces/*/memories", "/api/memories"))))),
                Map.of());
        List<String> routes = FeatureSwitch.declaredRoutes(memories);
        assertEquals(List.of("/api/spaces/*/memories", "/api/memories"), routes);
        assertTrue(Feature.owns(routes, "/api/spaces/abc/memories/search"));
        assertFalse(Feature.owns(routes, "/api/spaces/abc/threads"));
        assertEquals(List.of(), FeatureSwitch.declaredRoutes(bundle(Map.of(), Map.of())));
    }

    @Test
    void onlyABundleDeclaringAtriumKernelIsPartOfTheKernel() throws Exception {
        assertTrue(BundleUpdates.isKernel(bundle(Map.of("atrium.kernel", List.of(capability(Map.of()))), Map.of())));
        assertFalse(BundleUpdates.isKernel(bundle(
                Map.of("atrium.capability", List.of(capability(Map.of("atrium.capability", "runs")))), Map.of())));
    }

    @Test
    void aFeatureMemberIsTheBundleCarryingItsMavenDescriptorWhateverItsSymbolicName() throws Exception {
        Feature repos = new Feature(
                "repos",
                "",
                List.of(
                        new Feature.Member("dev.atrium", "repos.api", true),
                        new Feature.Member("dev.atrium", "repos", false)));
        Bundle api = bundle(Map.of(), Map.of("META-INF/maven/dev.atrium/repos.api/pom.properties", new URL("file:/p")));
        Bundle other =
                bundle(Map.of(), Map.of("META-INF/maven/dev.atrium/git.http/pom.properties", new URL("file:/p")));
        assertEquals(
                Optional.of(new Feature.Member("dev.atrium", "repos.api", true)), FeatureSwitch.member(repos, api));
        assertEquals(Optional.empty(), FeatureSwitch.member(repos, other));
    }

    @Test
    void aBundleUninstalledWhileItIsListedBelongsToNoFeatureInsteadOfFailingTheListing() throws Exception {
        Feature converter =
                new Feature("converter", "", List.of(new Feature.Member("org.osgi", "org.osgi.util.converter", false)));
        // what Felix answers once a bundle is uninstalled: the listing saw it installed a moment before
        Bundle gone = proxy(Bundle.class, (m, a) -> {
            if (m.equals("getEntry")) {
                throw new IllegalStateException("The bundle is uninstalled.");
            }
            return null;
        });
        assertEquals(Optional.empty(), FeatureSwitch.member(converter, gone));
        // and in the moment before Felix says so, its revision's content is already closed
        Bundle going = proxy(Bundle.class, (m, a) -> {
            if (m.equals("getEntry")) {
                throw new NullPointerException(
                        "Cannot invoke \"org.apache.felix.framework.cache.Content.hasEntry(String)\"");
            }
            return null;
        });
        assertEquals(Optional.empty(), FeatureSwitch.member(converter, going));
    }

    private static BundleCapability capability(Map<String, Object> attributes) {
        return proxy(BundleCapability.class, (m, a) -> m.equals("getAttributes") ? attributes : null);
    }

    /** An installed, unresolved bundle (no wiring): capabilities come from its revision. */
    private static Bundle bundle(Map<String, List<BundleCapability>> capabilities, Map<String, URL> entries) {
        BundleRevision revision = proxy(
                BundleRevision.class,
                (m, a) -> m.equals("getDeclaredCapabilities")
                        ? capabilities.getOrDefault((String) a[0], List.of())
                        : null);
        return proxy(Bundle.class, (m, a) -> switch (m) {
            case "adapt" -> a[0] == BundleRevision.class ? revision : null;
            case "getEntry" -> entries.get((String) a[0]);
            default -> null;
        });
    }

    interface Answer {
        Object answer(String method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Answer answer) {
        return type.cast(Proxy.newProxyInstance(
                type.getClassLoader(), new Class<?>[] {type}, (p, m, a) -> answer.answer(m.getName(), a)));
    }
}
