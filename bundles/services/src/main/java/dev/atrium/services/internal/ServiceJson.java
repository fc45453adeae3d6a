package dev.atrium.services.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;

/**
 * The JSON the services and workers routes take and answer, for the API reference
 * ({@link dev.atrium.kernel.api.JsonShape}).
 */
final class ServiceJson {

    private ServiceJson() {}

    // ------------------------------------------------------------------ services

    /** A create: {@code name} and {@code space_id} are required; without {@code slug} one is made from the name. */
    record Create(String name, @JsonProperty("space_id") String spaceId, String slug) {}

    record SlugInput(String slug) {}

    /**
     * {@link Views#service}: {@code status} is created, deployed or canary; {@code canary_percent} is set only while
     * there is a canary.
     */
    record View(
            String id,
            String name,
            String status,
            String slug,
            @JsonProperty("space_id") String spaceId,
            String hostname,
            @JsonProperty("current_deployment_id") String currentDeploymentId,
            @JsonProperty("canary_deployment_id") String canaryDeploymentId,
            @JsonProperty("canary_percent") Integer canaryPercent,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    /** One service as {@code GET /api/services/:id} answers it: the view with its settings. */
    record Detail(
            String id,
            String name,
            String status,
            String slug,
            @JsonProperty("space_id") String spaceId,
            String hostname,
            @JsonProperty("current_deployment_id") String currentDeploymentId,
            @JsonProperty("canary_deployment_id") String canaryDeploymentId,
            @JsonProperty("canary_percent") Integer canaryPercent,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            RuntimeSettings settings) {}

    record One(View service) {}

    record OneDetail(Detail service) {}

    record Page(List<View> services, long total, int limit, int offset) {}

    record Deleted(boolean success) {}

    // ------------------------------------------------------------------ settings

    /** Whole numbers from 1 to 1000000; {@code memory_mb} at least 16. */
    record Limits(
            @JsonProperty("cpu_ms") Long cpuMs,
            @JsonProperty("memory_mb") Long memoryMb) {}

    /**
     * A service's runtime settings ({@link Settings}); an unset one is absent. In a PATCH
     * each field named is set and {@code null} resets it. {@code mcp_server} is a boolean or an object.
     */
    record RuntimeSettings(
            @JsonProperty("compatibility_date") LocalDate compatibilityDate,
            @JsonProperty("compatibility_flags") List<String> compatibilityFlags,
            Limits limits,
            @JsonProperty("mcp_server") JsonNode mcpServer) {}

    record OneSettings(RuntimeSettings settings) {}

    // ------------------------------------------------------------------ env

    /** A variable to set; {@code value: null} removes it (the field is required). */
    record EnvChange(String name, String value, Boolean secret) {}

    record EnvInput(List<EnvChange> variables) {}

    /** A variable: a secret's {@code value} is never answered (absent). */
    record Variable(
            String name,
            String value,
            boolean secret,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record Variables(List<Variable> variables) {}

    // ------------------------------------------------------------------ common-env links

    record BuiltinLink(List<String> scopes) {}

    /** The names of the common variables linked, and the built-in ones by name with their scopes. */
    record Links(List<String> links, Map<String, BuiltinLink> builtins) {}

    /** Replaces every link; an absent field is none. */
    record LinksReplace(List<String> names, Map<String, BuiltinLink> builtins) {}

    /**
     * Adds and removes names; {@code builtins} maps a name to {@code {"scopes": [...]}} (set) or to {@code null}
     * (remove); the others stay.
     */
    record LinksPatch(List<String> add, List<String> remove, Map<String, Object> builtins) {}

    // ------------------------------------------------------------------ bindings

    /** A binding wanted: exactly one of {@code resource_id} and {@code resource_name}; {@code type} is checked. */
    record BindingInput(
            String name,
            @JsonProperty("resource_id") String resourceId,
            @JsonProperty("resource_name") String resourceName,
            String type) {}

    /** The service's whole set of bindings. */
    record BindingsInput(List<BindingInput> bindings) {}

    /** A binding: {@code permission} is read, write or admin (what the service may do with the resource). */
    record Binding(
            String name,
            @JsonProperty("resource_id") String resourceId,
            @JsonProperty("resource_name") String resourceName,
            String type,
            @JsonProperty("space_id") String spaceId,
            String permission) {}

    record Bindings(List<Binding> bindings) {}

    // ------------------------------------------------------------------ deployments

    record ArtifactKind(String kind) {}

    record TargetInput(ArtifactKind artifact) {}

    record Provider(String name) {}

    /**
     * A deployment ({@link DeployFlow#parse}): {@code bundle} is the base64 of the artifact; {@code strategy} direct
     * (the default) or canary; {@code provider.name} defaults to workerd; {@code target.artifact.kind} is worker-bundle
     * (the default) or container-image; {@code canary_percent} (1 to 99) only with strategy canary.
     */
    record DeployInput(
            String bundle,
            @JsonProperty("deploy_message") String deployMessage,
            String strategy,
            Provider provider,
            TargetInput target,
            @JsonProperty("canary_percent") Integer canaryPercent) {}

    record Artifact(String kind, String sha256, long size) {}

    record Target(Artifact artifact) {}

    /**
     * {@link Views#deployment}: {@code status} is active, canary, superseded, aborted or failed; {@code number} counts
     * the service's deployments.
     */
    record Deployment(
            String id,
            @JsonProperty("service_id") String serviceId,
            int number,
            String status,
            String strategy,
            @JsonProperty("deploy_message") String deployMessage,
            Provider provider,
            Target target,
            @JsonProperty("canary_percent") Integer canaryPercent,
            @JsonProperty("created_at") Instant createdAt) {}

    record OneDeployment(Deployment deployment) {}

    record DeploymentPage(List<Deployment> deployments, long total, int limit, int offset) {}

    /** Without a body (or {@code deployment_id}) the deployment before the current one becomes current again. */
    record Rollback(@JsonProperty("deployment_id") String deploymentId) {}

    record RolledBack(
            Deployment deployment,
            @JsonProperty("rolled_back_from") String rolledBackFrom) {}

    // ------------------------------------------------------------------ logs

    /** {@link Views#log}: {@code deployment_id} is the API's id of the deployment that wrote it. */
    record Line(
            long seq,
            Instant at,
            @JsonProperty("deployment_id") String deploymentId,
            String level,
            String message) {}

    /** A page of lines; {@code next_after} is the {@code after} of the next page. */
    record Logs(List<Line> logs, @JsonProperty("next_after") long nextAfter) {}
}
