package dev.atrium.resources.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the resources routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class ResourceJson {

    private ResourceJson() {}

    /**
     * A create: without {@code space_id} in the caller's default workspace, without {@code backend} on the type's
     * default one; {@code config} is checked against the provider's {@code config_schema}.
     */
    record Create(
            String name,
            String type,
            String backend,
            @JsonProperty("space_id") String spaceId,
            Map<String, Object> config) {}

    /** An update: only {@code name} and {@code config} may be given. */
    record Update(String name, Map<String, Object> config) {}

    /** A resource in a list; {@code status} is {@code ready} or {@code provider_missing}. */
    record Summary(
            String id,
            String name,
            String type,
            String backend,
            @JsonProperty("space_id") String spaceId,
            String status,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record Page(List<Summary> resources, long total, int limit, int offset) {}

    /** A resource another workspace shares with this one, with the permission its grant gives. */
    record Shared(
            String id,
            String name,
            String type,
            String backend,
            @JsonProperty("space_id") String spaceId,
            String status,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            String permission) {}

    record SharedPage(List<Shared> resources, long total, int limit, int offset) {}

    /** A running provider; {@code config_schema} is the JSON Schema of the {@code config} its resources take. */
    record Provider(
            String type,
            String backend,
            List<String> facets,
            @JsonProperty("config_schema") Map<String, Object> configSchema) {}

    record ProviderList(List<Provider> providers) {}

    /**
     * A resource's provider as the resource sees it: {@code facets}, {@code healthy} and {@code health} only while it
     * is {@code available}.
     */
    record ProviderStatus(
            String type, String backend, boolean available, List<String> facets, Boolean healthy, String health) {}

    /**
     * One resource: {@code permission} is what the caller may do ({@code read}, {@code write} or {@code admin});
     * {@code access} and {@code bindings} only for its owner; {@code usage} counts by metric.
     */
    record Detail(
            String id,
            String name,
            String type,
            String backend,
            @JsonProperty("space_id") String spaceId,
            String status,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            Map<String, Object> config,
            String permission,
            ProviderStatus provider,
            List<Grant> access,
            List<Binding> bindings,
            Map<String, Long> usage) {}

    record One(Detail resource) {}

    record Success(boolean success) {}

    /** Another workspace's access to a resource. */
    record Grant(
            @JsonProperty("space_id") String spaceId,
            String permission,
            @JsonProperty("created_at") Instant createdAt) {}

    /** A grant: {@code permission} is {@code read}, {@code write} or {@code admin}. */
    record GrantInput(@JsonProperty("space_id") String spaceId, String permission) {}

    record Grants(List<Grant> access) {}

    record OneGrant(Grant access) {}

    /** A service the resource is bound to, under the variable name {@code binding}. */
    record Binding(
            @JsonProperty("service_id") String serviceId,
            String binding,
            @JsonProperty("created_at") Instant createdAt) {}

    /** A bind: {@code binding} defaults to the resource's name in upper case. */
    record BindInput(@JsonProperty("service_id") String serviceId, String binding) {}

    record OneBinding(Binding binding) {}

    record Token(
            String id,
            String name,
            String permission,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("last_used_at") Instant lastUsedAt) {}

    record Tokens(List<Token> tokens) {}

    /** A new token: {@code name} defaults to {@code token}, {@code permission} to {@code read}. */
    record TokenInput(String name, String permission) {}

    /** A new token with its secret ({@code token}, shown this once) and the header to send it in. */
    record NewToken(
            String id,
            String name,
            String permission,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("last_used_at") Instant lastUsedAt,
            String token,
            String header) {}

    record OneNewToken(NewToken token) {}

    /**
     * How to reach a resource: {@code api} is its path on this API, {@code token_header} the header a resource token
     * goes in, {@code connection} what the provider tells (empty when the resource is reached only through the API).
     */
    record Connection(
            @JsonProperty("resource_id") String resourceId,
            String type,
            String backend,
            String permission,
            String api,
            @JsonProperty("token_header") String tokenHeader,
            Map<String, Object> connection) {}

    record OneConnection(Connection connection) {}

    record KvKey(String name, @JsonProperty("expires_at") Instant expiresAt) {}

    /** A page of keys: {@code cursor} (null on the last page) asks for the next. */
    record KvPage(
            List<KvKey> keys,
            String cursor,
            @JsonProperty("list_complete") boolean listComplete) {}

    record ObjectInfo(
            String key,
            long size,
            String etag,
            @JsonProperty("content_type") String contentType,
            Instant uploaded) {}

    /** A page of objects: {@code cursor} (null on the last page) asks for the next. */
    record ObjectPage(List<ObjectInfo> objects, String cursor, boolean truncated) {}

    record OneObject(ObjectInfo object) {}

    record Stats(
            @JsonProperty("object_count") long objectCount,
            @JsonProperty("total_bytes") long totalBytes) {}

    record OneStats(Stats stats) {}

    record Table(String name, @JsonProperty("row_count") long rowCount) {}

    record Tables(List<Table> tables) {}

    /** A statement; {@code params} are strings, numbers, booleans or null, bound in order. */
    record SqlInput(String sql, List<Object> params) {}

    /** Rows of a query or a table: bytes as base64; {@code truncated} when there were more rows than answered. */
    record SqlResult(
            List<String> columns,
            List<List<Object>> rows,
            @JsonProperty("rows_changed") long rowsChanged,
            boolean truncated) {}
}
