package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWiring;

class CapabilityDeclarationTest {

    private static final Map<String, Object> MEMORIES = Map.of(
            "atrium.capability",
            "memories",
            "label",
            "Memories",
            "routes",
            List.of("/api/spaces/*/memories", "/api/memories"));

    @Test
    void theTypedAttributesOfAnAtriumCapabilityAreItsDeclaration() {
        CapabilityDeclaration d = CapabilityDeclaration.from(MEMORIES);
        assertEquals(
                new CapabilityDeclaration(
                        "memories", "Memories", List.of("/api/spaces/*/memories", "/api/memories"), true),
                d);
    }

    @Test
    void aCapabilityWithoutLabelOrRoutesIsLabelledByItsCapitalisedName() {
        assertEquals(
                new CapabilityDeclaration("runs", "Runs", List.of(), true),
                CapabilityDeclaration.from(Map.of("atrium.capability", "runs")));
    }

    @Test
    void aCapabilityCanKeepOutOfTheSidebar() {
        assertFalse(CapabilityDeclaration.from(Map.of("atrium.capability", "oauth", "sidebar", "false"))
                .sidebar());
    }

    @Test
    void aCapabilityWithoutANameIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> CapabilityDeclaration.from(Map.of("label", "X")));
    }

    @Test
    void aResolvedBundleIsReadThroughItsWiringAnUnresolvedOneThroughItsRevision() {
        BundleCapability cap =
                proxy(BundleCapability.class, (name, args) -> name.equals("getAttributes") ? MEMORIES : null);
        BundleWiring wiring = proxy(
                BundleWiring.class,
                (name, args) ->
                        name.equals("getCapabilities") && "atrium.capability".equals(args[0]) ? List.of(cap) : null);
        BundleRevision revision = proxy(
                BundleRevision.class,
                (name, args) -> name.equals("getDeclaredCapabilities") && "atrium.capability".equals(args[0])
                        ? List.of(cap)
                        : null);
        Bundle resolved = bundle(wiring, revision);
        Bundle installed = bundle(null, revision);
        Bundle plain = bundle(null, proxy(BundleRevision.class, (name, args) -> List.of()));
        assertEquals(
                "memories", CapabilityDeclaration.of(resolved).orElseThrow().id());
        assertEquals(
                "Memories", CapabilityDeclaration.of(installed).orElseThrow().label());
        assertTrue(CapabilityDeclaration.of(plain).isEmpty());
    }

    private static Bundle bundle(BundleWiring wiring, BundleRevision revision) {
        return proxy(Bundle.class, (name, args) -> {
            if (name.equals("adapt")) {
                return args[0] == BundleWiring.class ? wiring : args[0] == BundleRevision.class ? revision : null;
            }
            return null;
        });
    }

    interface Answer {
        Object answer(String method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Answer answer) {
        return type.cast(Proxy.newProxyInstance(
                type.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> answer.answer(m.getName(), args)));
    }
}
