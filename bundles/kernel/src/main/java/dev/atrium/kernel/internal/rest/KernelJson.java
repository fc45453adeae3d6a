package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * The JSON the kernel's routes take and answer (workspaces, the signed-in user, setup, tokens, the operator's users and
 * health), for the API reference ({@link dev.atrium.kernel.api.JsonShape}).
 */
final class KernelJson {

    private KernelJson() {}

    /** {@link dev.atrium.kernel.internal.domain.WorkspaceRecord#toJson()}. */
    record Space(
            String id,
            String name,
            String slug,
            String description,
            @JsonProperty("is_default") boolean isDefault,
            @JsonProperty("security_posture") String securityPosture,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record OneSpace(Space space) {}

    record SpacePage(List<Space> spaces, long total, int limit, int offset) {}

    /**
     * A create ({@code name} required) or an update of a workspace; {@code security_posture} is {@code standard} or
     * {@code restricted_egress}; {@code ai_model} and {@code ai_provider} are read by an update only.
     */
    record SpaceInput(
            String name,
            String slug,
            String description,
            @JsonProperty("security_posture") String securityPosture,
            @JsonProperty("ai_model") String aiModel,
            @JsonProperty("ai_provider") String aiProvider) {}

    /** A workspace's model settings, as answered and as sent (each field optional in a change). */
    record Model(String model, String provider) {}

    /** A sidebar entry of an active capability; {@code path} is its route under the workspace. */
    record SidebarItem(String id, String label, String path) {}

    record SidebarItems(List<SidebarItem> items) {}

    /** A common environment variable in an export: its name and whether it is secret, never its value. */
    record ExportedVariable(String name, boolean secret) {}

    record Export(
            Space space,
            Model model,
            @JsonProperty("common_env") List<ExportedVariable> commonEnv,
            @JsonProperty("exported_at") Instant exportedAt) {}

    /**
     * A part of a workspace archive: how many items it made here, and how many the archive's manifest says it held
     * ({@code archived}, null when it says nothing); fewer made than archived means some were left out (see the part).
     */
    record ImportedPart(String name, long count, Long archived) {}

    /** What {@code POST /api/spaces/import} made: the new workspace, its parts, and the parts no bundle here reads. */
    record Imported(Space space, List<ImportedPart> parts, List<String> skipped) {}

    /** A member; a workspace has exactly one, its owner ({@code role} {@code owner}). */
    record Member(String username, String name, String email, String picture, String role) {}

    record Members(List<Member> members) {}

    /** A common environment variable; {@code value} is null for a secret one. */
    record Variable(
            String name,
            String value,
            boolean secret,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record Variables(List<Variable> variables) {}

    record OneVariable(Variable variable) {}

    /** Sets a variable: {@code name} matches {@code ^[A-Z_][A-Z0-9_]*$}; {@code secret} defaults to false. */
    record VariableInput(String name, String value, Boolean secret) {}

    record Success(boolean success) {}

    /** The signed-in user ({@link dev.atrium.kernel.internal.domain.PrincipalRecord#toMe()}). */
    record Me(
            String email,
            String name,
            String username,
            String picture,
            @JsonProperty("setup_completed") boolean setupCompleted) {}

    /** {@code activity_visibility} is {@code public}, {@code followers} or {@code private}. */
    record Settings(
            @JsonProperty("setup_completed") boolean setupCompleted,
            @JsonProperty("auto_update_enabled") boolean autoUpdateEnabled,
            @JsonProperty("private_account") boolean privateAccount,
            @JsonProperty("activity_visibility") String activityVisibility) {}

    /** A change of settings: only the fields sent change. */
    record SettingsInput(
            @JsonProperty("setup_completed") Boolean setupCompleted,
            @JsonProperty("auto_update_enabled") Boolean autoUpdateEnabled,
            @JsonProperty("private_account") Boolean privateAccount,
            @JsonProperty("activity_visibility") String activityVisibility) {}

    /** A username: 3 to 39 lowercase letters, digits and single hyphens. */
    record UsernameInput(String username) {}

    /** A personal access token; {@code scopes} is space-separated, {@code expires_at} null for one that never expires. */
    record Token(
            String id,
            String name,
            String scopes,
            @JsonProperty("token_prefix") String tokenPrefix,
            @JsonProperty("expires_at") Instant expiresAt,
            @JsonProperty("created_at") Instant createdAt) {}

    record Tokens(List<Token> tokens) {}

    /** A new personal access token with its secret ({@code token}), shown only here. */
    record CreatedToken(
            String id,
            String name,
            String scopes,
            @JsonProperty("token_prefix") String tokenPrefix,
            @JsonProperty("expires_at") Instant expiresAt,
            @JsonProperty("created_at") Instant createdAt,
            String token) {}

    /**
     * A token request: {@code scopes} space-separated (default {@code *}); {@code expiresAt} (so spelled) an ISO 8601
     * date-time with an offset, in the future (default: never). {@code name} is required but for the operator's
     * {@code /admin/users/:username/tokens}, where it defaults to {@code cli}.
     */
    record TokenInput(String name, String scopes, String expiresAt) {}

    /**
     * A user as the operator sees it; {@code status} is {@code active} or {@code suspended}, {@code provider}
     * {@code local} or an identity provider's name, {@code last_sign_in_at} null when no sign-in is known, and
     * {@code token_count} the live personal access tokens.
     */
    record User(
            String id,
            String username,
            String name,
            String email,
            String provider,
            String status,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("last_sign_in_at") Instant lastSignInAt,
            @JsonProperty("token_count") long tokenCount) {}

    /** A page of users, newest first; {@code next_cursor} gives the next one (null on the last). */
    record UserPage(
            List<User> users, @JsonProperty("next_cursor") String nextCursor) {}

    /** How many credentials of each kind were ended (kinds whose bundle is disabled are absent). */
    record Revoked(
            @JsonProperty("personal_access_tokens") int personalAccessTokens,
            int sessions,
            @JsonProperty("oauth_tokens") int oauthTokens) {}

    record RevokedCredentials(User user, Space space, Revoked revoked) {}

    /**
     * An audit entry: {@code actor} is {@code operator} or the user who signed in, {@code action} a snake_case verb
     * ({@code user_created}, {@code user_suspended}, {@code user_reactivated}, {@code tokens_revoked},
     * {@code token_created}, {@code feature_enabled}, {@code feature_disabled}, {@code bundle_updated},
     * {@code sign_in}), {@code target} what it was done to.
     */
    record AuditEntry(
            String id,
            Instant at,
            String actor,
            String action,
            String target,
            @JsonProperty("principal_id") String principalId,
            String detail) {}

    /** A page of audit entries, newest first; {@code next_cursor} gives the next one (null on the last). */
    record AuditPage(
            List<AuditEntry> entries,
            @JsonProperty("next_cursor") String nextCursor) {}

    /** The operator's view of a user and its default workspace (null when it has none). */
    record UserAndSpace(User user, Space space) {}

    record SetupStatus(@JsonProperty("setup_completed") boolean setupCompleted, String username) {}

    /** Whether {@code username} may be taken; {@code reason} says why not (null when it may). */
    record UsernameCheck(String username, boolean available, String reason) {}

    /** {@code status} is {@code ok} or {@code not_ready}; {@code capabilities} the symbolic names of the active ones. */
    record Health(String status, List<String> problems, List<String> capabilities) {}

    /** The long jobs, running first (newest first), then the last hundred finished, newest first. */
    record JobList(List<dev.atrium.kernel.api.Jobs.Snapshot> jobs) {}

    record OneJob(dev.atrium.kernel.api.Jobs.Snapshot job) {}
}
