package dev.atrium.deploy.api;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One deployment of a service as a provider runs it: immutable; a change of code, settings, env or bindings is a new
 * deployment id.
 *
 * @param id                 the deployment's id (unique on the instance)
 * @param serviceId          the service it belongs to; logs are kept per service
 * @param artifactKind       {@code worker-bundle} or {@code container-image}
 * @param artifact           the artifact's bytes: for {@code worker-bundle} either one ES module (JavaScript text) or
 *                           a ZIP archive of modules whose main module is {@code index.js} (or {@code worker.js},
 *                           {@code main.js}, in that order)
 * @param compatibilityDate  {@code YYYY-MM-DD}, or null for the provider's default
 * @param compatibilityFlags runtime flags
 * @param limits             resource limits, e.g. {@code cpu_ms}, {@code memory_mb}; a provider applies what its
 *                           runtime allows and ignores the rest
 * @param env                plain and secret variables, by name; secret values are here in clear, for the runtime
 *                           only: a provider never logs them and keeps them only where the runtime needs them
 * @param bindings           resources the code calls
 */
public record Deployment(
        String id,
        String serviceId,
        String artifactKind,
        byte[] artifact,
        String compatibilityDate,
        List<String> compatibilityFlags,
        Map<String, Long> limits,
        Map<String, String> env,
        List<Binding> bindings) {

    public Deployment {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(serviceId, "serviceId");
        Objects.requireNonNull(artifactKind, "artifactKind");
        Objects.requireNonNull(artifact, "artifact");
        compatibilityFlags = compatibilityFlags == null ? List.of() : List.copyOf(compatibilityFlags);
        limits = limits == null ? Map.of() : Map.copyOf(limits);
        env = env == null ? Map.of() : Map.copyOf(env);
        bindings = bindings == null ? List.of() : List.copyOf(bindings);
    }

    /** Never prints the artifact or env values. */
    @Override
    public String toString() {
        return "Deployment[" + id + " of " + serviceId + ", " + artifactKind + ", " + artifact.length + " bytes, env "
                + env.keySet() + ", bindings "
                + bindings.stream().map(Binding::name).toList() + "]";
    }
}
