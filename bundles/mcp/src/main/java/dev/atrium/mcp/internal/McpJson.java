package dev.atrium.mcp.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the MCP server routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class McpJson {

    private McpJson() {}

    /**
     * A registration: {@code space_id}, {@code name} and {@code url} are required; {@code transport} is
     * {@code streamable_http} (the default) or {@code sse}; {@code enabled} defaults to true.
     */
    record Registration(
            @JsonProperty("space_id") String spaceId, String name, String url, String transport, Boolean enabled) {}

    /** A change: any of the fields, at least one. */
    record Change(String name, String url, String transport, Boolean enabled) {}

    /**
     * A server ({@link McpServerStore.Server}); {@code tool_count} and {@code tools_listed_at} are null until listed;
     * {@code managed_by} names the capability that registered it (an app group: {@code app-group:<id>}), null for the
     * owner's own.
     */
    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            String name,
            String url,
            String transport,
            boolean enabled,
            @JsonProperty("tool_count") Integer toolCount,
            @JsonProperty("tools_listed_at") Instant toolsListedAt,
            boolean authorized,
            @JsonProperty("managed_by") String managedBy,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(View server) {}

    record Page(List<View> servers, long total, int limit, int offset) {}

    record Deleted(boolean success) {}

    /** A tool as listed ({@link McpClient}): {@code title} only when the server gives one; the tool's JSON Schema. */
    record Tool(
            String name,
            String title,
            String description,
            @JsonProperty("input_schema") Map<String, Object> inputSchema) {}

    record Tools(@JsonProperty("server_id") String serverId, List<Tool> tools) {}

    /** Where to send the user's browser, and until when its state holds. */
    record Authorization(
            @JsonProperty("authorization_url") String authorizationUrl,
            @JsonProperty("expires_at") Instant expiresAt) {}

    /** The end of the OAuth flow (a browser without a session is sent to sign in first). */
    record Connected(
            boolean success,
            @JsonProperty("server_id") String serverId,
            @JsonProperty("space_id") String spaceId) {}
}
