package dev.atrium.operations.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The JSON the operations routes answer (features, bundles, routes, the API reference itself), for the API reference
 * ({@link dev.atrium.kernel.api.JsonShape}).
 */
final class OperationsJson {

    private OperationsJson() {}

    /**
     * A route of the running server: {@code kind} {@code jaxrs} or {@code servlet}; {@code method} null for a servlet
     * (it answers the methods it implements); {@code bundle} the symbolic name of the bundle that registered it.
     */
    record Route(
            String kind, String method, String path, List<String> consumes, List<String> produces, String bundle) {}

    record Routes(List<Route> routes) {}

    /** A bundle updated from a jar: its new version and state, and the version it had. */
    record BundleUpdate(
            @JsonProperty("symbolic_name") String symbolicName,
            String version,
            @JsonProperty("previous_version") String previousVersion,
            String state) {}

    record OneBundleUpdate(BundleUpdate bundle) {}

    /**
     * A member of a feature: {@code id} is its {@code groupId:artifactId}; {@code symbolic_name} null and
     * {@code state} {@code MISSING} when it is not installed.
     */
    record FeatureBundle(
            String id, @JsonProperty("symbolic_name") String symbolicName, String state) {}

    /**
     * A feature: {@code conflicts} the features it cannot be enabled with; {@code configured} false when one of its
     * bundles waits for the operator's configuration; {@code status} {@code enabled}, {@code disabled} or
     * {@code enabled, not configured}.
     */
    record FeatureView(
            String name,
            boolean enabled,
            String description,
            List<String> conflicts,
            List<FeatureBundle> bundles,
            boolean configured,
            String status) {}

    record Features(List<FeatureView> features) {}

    record OneFeature(FeatureView feature) {}

    /** An installed bundle; {@code state} as OSGi names it ({@code ACTIVE}, {@code RESOLVED}, …), {@code feature} null for none. */
    record BundleView(
            long id,
            @JsonProperty("symbolic_name") String symbolicName,
            String version,
            String state,
            String feature) {}

    record Bundles(List<BundleView> bundles) {}

    /** An OpenAPI 3.1 document: its sections as the specification defines them. */
    record OpenApi(
            String openapi,
            Map<String, Object> info,
            List<Map<String, Object>> servers,
            List<Map<String, Object>> tags,
            Map<String, Object> paths,
            Map<String, Object> components,
            List<Map<String, Object>> security) {}

    /**
     * A property of a PID: {@code type} its MetaType type (null when no definition describes it); {@code value} the
     * value the component has, {@code ••••} for a secret that is set; {@code source} {@code operator} (the file
     * {@code from} names), {@code environment} ({@code from} names the variable or framework property) or
     * {@code default}.
     */
    record ConfigProperty(
            String name,
            String label,
            String type,
            boolean multiple,
            String description,
            @JsonProperty("default") Object defaultValue,
            Object value,
            boolean secret,
            boolean set,
            String source,
            String from) {}

    /** A PID: {@code file} the operator's file in the deploy directory, null for none. */
    record ConfigPid(String pid, String name, String description, String file, List<ConfigProperty> properties) {}

    record Configs(List<ConfigPid> configs) {}

    record OneConfig(ConfigPid config) {}

    /** Properties to set (null: back to the environment or the default); a secret sent back as {@code ••••} is kept. */
    record ConfigInput(Map<String, Object> properties) {}

    /**
     * A file of {@code <data>/deploy/}: {@code kind} {@code bundle} (a jar), {@code configuration} ({@code .config} or
     * {@code .cfg}, {@code pid} from its name), {@code directory} or {@code other}; for a jar FileInstall installed, the
     * bundle's id, symbolic name, version and OSGi state (else null).
     */
    record DeployFile(
            String name,
            String kind,
            Long size,
            Instant modified,
            String pid,
            @JsonProperty("bundle_id") Long bundleId,
            @JsonProperty("symbolic_name") String symbolicName,
            String version,
            String state) {}

    /** The deploy directory's path and files by name; {@code more} counts files past the first 1,000. */
    record DeployDirectory(String directory, List<DeployFile> files, long more) {}
}
