package dev.atrium.store.ap.core.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * The JSON the stores and federation admin routes take and answer, for the API reference ({@link
 * dev.atrium.kernel.api.JsonShape}).
 */
final class StoreJson {

    private StoreJson() {}

    /** A new store: {@code slug} is unique on the server (1-40 lowercase letters, digits and inner hyphens). */
    record Create(
            String slug,
            String name,
            String summary,
            @JsonProperty("icon_url") String iconUrl) {}

    /** A change: any of the three; {@code icon_url: null} removes the icon. */
    record Change(
            String name,
            String summary,
            @JsonProperty("icon_url") String iconUrl) {}

    /** A store the workspace publishes; {@code actor_url} is its ActivityPub actor. */
    record Store(
            String id,
            @JsonProperty("space_id") String spaceId,
            String slug,
            String name,
            String summary,
            @JsonProperty("icon_url") String iconUrl,
            @JsonProperty("actor_url") String actorUrl,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(Store store) {}

    record Page(List<Store> stores, long total, int limit, int offset) {}

    record Success(boolean success) {}

    /** A repository added to a store's inventory, with what its actor said then. */
    record Item(
            @JsonProperty("repository_uri") String repositoryUri,
            @JsonProperty("clone_uri") String cloneUri,
            @JsonProperty("default_branch_ref") String defaultBranchRef,
            @JsonProperty("default_branch_hash") String defaultBranchHash,
            @JsonProperty("added_at") Instant addedAt) {}

    /**
     * A store's inventory: {@code explicit} when it has items, else {@code automatic} (every public repository of the
     * workspace).
     */
    record Inventory(String mode, List<Item> items) {}

    /** The repository actor's URL to add. */
    record Add(@JsonProperty("repository_uri") String repositoryUri) {}

    record OneItem(Item item) {}

    /**
     * An outgoing activity to one inbox: {@code state} is {@code pending}, {@code delivered} or {@code dead};
     * {@code next_attempt_at} only while pending; {@code last_status} the HTTP status of the last attempt.
     */
    record Delivery(
            String id,
            String actor,
            String inbox,
            String state,
            int attempts,
            @JsonProperty("next_attempt_at") Instant nextAttemptAt,
            @JsonProperty("last_status") Integer lastStatus,
            @JsonProperty("last_error") String lastError,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("finished_at") Instant finishedAt) {}

    record Deliveries(List<Delivery> deliveries) {}
}
