package dev.atrium.kernel.internal.http;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWiring;

/**
 * What a capability bundle declares about itself, once, as an OSGi capability in its manifest:
 * {@code Provide-Capability: atrium.capability;atrium.capability=memories;label=Memories;routes:List<String>="..."}.
 * Read from the framework's wiring (typed attributes), never by parsing manifest text.
 *
 * @param id     the capability's name, also its path segment under {@code /api/spaces/:spaceId/}
 * @param label  what a sidebar shows
 * @param routes the path patterns it serves
 * @param sidebar whether a workspace's sidebar lists it ({@code sidebar=false} for one that serves no
 *                workspace, such as the OAuth server)
 */
public record CapabilityDeclaration(String id, String label, List<String> routes, boolean sidebar) {

    public static final String NAMESPACE = "atrium.capability";

    /** The declaration of {@code bundle}, if it declares one; from its wiring when resolved, else from its revision. */
    public static Optional<CapabilityDeclaration> of(Bundle bundle) {
        List<BundleCapability> caps;
        BundleWiring wiring = bundle.adapt(BundleWiring.class);
        if (wiring != null) {
            caps = wiring.getCapabilities(NAMESPACE);
        } else {
            BundleRevision revision = bundle.adapt(BundleRevision.class);
            caps = revision == null ? List.of() : revision.getDeclaredCapabilities(NAMESPACE);
        }
        return caps == null || caps.isEmpty()
                ? Optional.empty()
                : Optional.of(from(caps.get(0).getAttributes()));
    }

    /**
     * The declaration these capability attributes make; a missing label is the id capitalised, missing routes none,
     * a missing sidebar attribute true.
     */
    static CapabilityDeclaration from(Map<String, Object> attributes) {
        Object id = attributes.get(NAMESPACE);
        if (!(id instanceof String name) || name.isBlank()) {
            throw new IllegalArgumentException(NAMESPACE + " capability without a name: " + attributes);
        }
        String label = attributes.get("label") instanceof String l && !l.isBlank()
                ? l
                : name.substring(0, 1).toUpperCase(Locale.ROOT) + name.substring(1);
        List<String> routes = attributes.get("routes") instanceof List<?> list
                ? list.stream().map(String::valueOf).toList()
                : List.of();
        return new CapabilityDeclaration(name, label, routes, !"false".equals(attributes.get("sidebar")));
    }
}
