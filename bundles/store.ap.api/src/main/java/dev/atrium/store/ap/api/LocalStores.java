package dev.atrium.store.ap.api;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The stores this instance publishes: catalogs a workspace made ({@code /api/spaces/:spaceId/stores}), each under a slug
 * unique on the instance ({@code /ap/stores/<slug>}), with an optional explicit inventory.
 */
@ProviderType
public interface LocalStores {

    /**
     * EventAdmin topic sent (synchronously) when a repository joins a store's explicit inventory; carries
     * {@link #STORE_ID}, {@link #STORE_SLUG} and {@link #REPOSITORY_URI}.
     *
     * @since 1.1
     */
    String INVENTORY_ADDED = "atrium/store/inventory_added";
    /**
     * EventAdmin topic sent (synchronously) when a repository leaves a store's explicit inventory; as
     * {@link #INVENTORY_ADDED}.
     *
     * @since 1.1
     */
    String INVENTORY_REMOVED = "atrium/store/inventory_removed";
    /**
     * EventAdmin topic sent (synchronously) when a store is deleted; carries {@link #STORE_ID} and {@link #STORE_SLUG}.
     *
     * @since 1.1
     */
    String STORE_DELETED = "atrium/store/deleted";
    /** @since 1.1 */
    String STORE_ID = "store_id";
    /** @since 1.1 */
    String STORE_SLUG = "store_slug";
    /** @since 1.1 */
    String REPOSITORY_URI = "repository_uri";

    /**
     * The stores workspace {@code spaceId} publishes, oldest first.
     *
     * @since 1.1
     */
    List<LocalStore> ofSpace(String spaceId);

    /**
     * Every store whose explicit inventory names {@code repositoryUri}.
     *
     * @since 1.1
     */
    List<LocalStore> listing(String repositoryUri);

    /** The store published as {@code slug}. */
    Optional<LocalStore> bySlug(String slug);

    /**
     * The store's explicit inventory: canonical repository actor URIs, oldest first. Empty means automatic mode: every
     * public repository of the store's workspace.
     */
    List<String> inventory(String storeId);

    /**
     * A published store.
     *
     * @param iconUrl null when the store has no icon
     */
    record LocalStore(
            String id,
            String spaceId,
            String slug,
            String name,
            String summary,
            String iconUrl,
            Instant createdAt,
            Instant updatedAt) {}
}
