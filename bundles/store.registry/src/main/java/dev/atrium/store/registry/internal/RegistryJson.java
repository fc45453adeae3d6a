package dev.atrium.store.registry.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the store registry routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class RegistryJson {

    private RegistryJson() {}

    /**
     * A store to register: {@code identifier} is {@code slug@domain} (looked up by WebFinger) or the actor's URL;
     * {@code set_active} and {@code subscribe} default to false.
     */
    record Register(
            String identifier, @JsonProperty("set_active") Boolean setActive, Boolean subscribe) {}

    /** A change: at least one of the two. */
    record Flags(
            @JsonProperty("is_active") Boolean isActive,
            @JsonProperty("subscription_enabled") Boolean subscriptionEnabled) {}

    /** A registered remote store, as its actor said when it was last fetched ({@code last_fetched_at}). */
    record Entry(
            String id,
            @JsonProperty("actor_url") String actorUrl,
            String domain,
            @JsonProperty("store_slug") String storeSlug,
            String name,
            String summary,
            @JsonProperty("icon_url") String iconUrl,
            @JsonProperty("is_active") boolean isActive,
            @JsonProperty("subscription_enabled") boolean subscriptionEnabled,
            @JsonProperty("last_fetched_at") Instant lastFetchedAt,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(Entry store) {}

    record Entries(List<Entry> stores) {}

    record Success(boolean success) {}

    /** A repository a remote store lists; {@code id} is its URL there. */
    record RemoteRepository(
            String id,
            String owner,
            String name,
            String summary,
            @JsonProperty("clone_url") String cloneUrl,
            @JsonProperty("browse_url") String browseUrl) {}

    /** A page (from 1) of the store's repositories. */
    record Repositories(List<RemoteRepository> repositories, long total, int page, int limit) {}

    /** A page (from 1) of the store's repositories that match {@code query}. */
    record Found(List<RemoteRepository> repositories, long total, int page, int limit, String query) {}

    /** An install: {@code local_name} defaults to the remote repository's name. */
    record Install(
            @JsonProperty("remote_owner") String remoteOwner,
            @JsonProperty("remote_repo_name") String remoteRepoName,
            @JsonProperty("local_name") String localName) {}

    /**
     * An install by URL: {@code repository_url} is the repository's object or actor on the store ({@code
     * …/repositories/<owner>/<repo>} or {@code …/ap/repos/<owner>/<repo>}); {@code local_name} defaults to its name.
     */
    record Import(
            @JsonProperty("repository_url") String repositoryUrl,
            @JsonProperty("local_name") String localName) {}

    /** The workspace's new repository, cloned from the store's. */
    record Installed(
            String id,
            String name,
            @JsonProperty("clone_url") String cloneUrl,
            @JsonProperty("remote_store_actor_url") String remoteStoreActorUrl,
            @JsonProperty("remote_browse_url") String remoteBrowseUrl) {}

    record OneInstalled(Installed repository) {}

    /** How many activities of the store's outbox were new. */
    record Polled(@JsonProperty("new_updates") int newUpdates) {}

    /** An activity a registered store's outbox showed. */
    record Update(
            String id,
            @JsonProperty("registry_entry_id") String registryEntryId,
            @JsonProperty("store_name") String storeName,
            @JsonProperty("store_domain") String storeDomain,
            @JsonProperty("activity_id") String activityId,
            @JsonProperty("activity_type") String activityType,
            @JsonProperty("object_id") String objectId,
            @JsonProperty("object_type") String objectType,
            @JsonProperty("object_name") String objectName,
            @JsonProperty("object_summary") String objectSummary,
            Instant published,
            boolean seen,
            @JsonProperty("created_at") Instant createdAt) {}

    record Updates(long total, List<Update> updates) {}

    /** Either {@code update_ids} or {@code all: true}. */
    record MarkSeen(@JsonProperty("update_ids") List<String> updateIds, Boolean all) {}
}
