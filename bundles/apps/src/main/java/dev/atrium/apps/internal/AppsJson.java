package dev.atrium.apps.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the app platform's routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class AppsJson {

    private AppsJson() {}

    record GroupRef(String id, String name) {}

    record Snapshot(
            String state, @JsonProperty("rollback_ready") boolean rollbackReady, String format) {}

    record Source(
            String kind,
            @JsonProperty("repository_url") String repositoryUrl,
            String ref,
            @JsonProperty("ref_type") String refType,
            @JsonProperty("commit_sha") String commitSha,
            @JsonProperty("resolved_repo_id") String resolvedRepoId) {}

    record AppDeployment(
            String id,
            GroupRef group,
            String status,
            @JsonProperty("manifest_version") String manifestVersion,
            List<String> hostnames,
            @JsonProperty("rollback_of_app_deployment_id") String rollbackOf,
            Snapshot snapshot,
            Source source,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record ApplyResult(List<String> applied, List<String> skipped) {}

    record Created(
            @JsonProperty("app_deployment") AppDeployment appDeployment,
            @JsonProperty("apply_result") ApplyResult applyResult) {}

    record One(@JsonProperty("app_deployment") AppDeployment appDeployment) {}

    record Page(
            @JsonProperty("app_deployments") List<AppDeployment> appDeployments, long total, int limit, int offset) {}

    record SourceRequest(
            String kind,
            @JsonProperty("repository_id") String repositoryId,
            @JsonProperty("repository_url") String repositoryUrl,
            String ref,
            @JsonProperty("ref_type") String refType) {}

    /** {@code max_error_percent}: the canary is aborted when more of its requests end in a server error. */
    record Step(
            int weight,
            @JsonProperty("hold_seconds") Integer holdSeconds,
            @JsonProperty("max_error_percent") Integer maxErrorPercent) {}

    record CanaryStep(
            int weight, @JsonProperty("hold_seconds") Integer holdSeconds) {}

    record Canary(
            List<CanaryStep> steps,
            @JsonProperty("max_error_percent") Integer maxErrorPercent) {}

    record Provider(String name) {}

    /** {@code approve} lists what the caller approves: {@code oauth}, {@code source}. */
    record Create(
            @JsonProperty("group_name") String groupName,
            SourceRequest source,
            Map<String, String> env,
            Provider provider,
            String strategy,
            Canary canary,
            List<String> approve) {}

    record Approve(List<String> approve) {}

    record Rollout(
            String state,
            String strategy,
            int step,
            List<Step> steps,
            int weight,
            String message,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record RolloutOne(Rollout rollout) {}

    record Deleted(boolean deleted) {}

    // ------------------------------------------------------------------ groups

    record Group(
            String id,
            @JsonProperty("space_id") String spaceId,
            String name,
            JsonNode metadata,
            Source source,
            String provider,
            @JsonProperty("current_app_deployment_id") String currentAppDeploymentId,
            @JsonProperty("has_desired") boolean hasDesired,
            @JsonProperty("applied_at") Instant appliedAt,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record InventoryItem(String kind, String key, String id, String name, String hostname, String type) {}

    record GroupOne(Group group) {}

    record GroupDetail(Group group, List<InventoryItem> inventory) {}

    record GroupPage(List<Group> groups, long total, int limit, int offset) {}

    record GroupCreate(String name, JsonNode metadata, JsonNode manifest) {}

    record Metadata(JsonNode metadata) {}

    record Desired(String manifest, String format) {}

    record DesiredOne(Desired desired) {}

    record DesiredPut(JsonNode manifest) {}

    /** {@code manifest} is YAML text or a JSON object; omitted, the group's desired manifest. */
    record PlanRequest(@JsonProperty("group_name") String groupName, JsonNode manifest) {}

    record ApplyRequest(@JsonProperty("group_name") String groupName, JsonNode manifest, SourceRequest source) {}

    record UninstallRequest(@JsonProperty("group_name") String groupName) {}

    record Change(String kind, String key, String action, List<String> fields) {}

    record Summary(int create, int update, int delete, int unchanged) {}

    record Plan(
            @JsonProperty("group_name") String groupName,
            @JsonProperty("group_id") String groupId,
            List<Change> changes,
            Summary summary) {}

    record PlanOne(Plan plan) {}

    record Applied(
            Group group, @JsonProperty("apply_result") ApplyResult applyResult) {}

    record Uninstalled(
            boolean deleted, @JsonProperty("apply_result") ApplyResult applyResult) {}

    record Items(List<InventoryItem> items) {}

    record Update(String kind, String ref, String current, String available) {}

    record Updates(List<Update> updates) {}

    // ------------------------------------------------------------------ apps

    record App(
            String id,
            String name,
            @JsonProperty("display_name") String displayName,
            String description,
            String icon,
            String version,
            @JsonProperty("space_id") String spaceId,
            @JsonProperty("group_id") String groupId,
            boolean builtin,
            List<String> hostnames,
            String health,
            @JsonProperty("launch_url") String launchUrl,
            @JsonProperty("client_id") String clientId) {}

    record AppOne(App app) {}

    record AppList(List<App> apps) {}

    record AppPatch(@JsonProperty("display_name") String displayName, String description, String icon) {}

    record ClientKey(
            @JsonProperty("client_id") String clientId,
            @JsonProperty("client_secret") String clientSecret,
            @JsonProperty("previous_secret_valid_until") Instant previousValidUntil) {}
}
