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
    record LocalStore(String id, String spaceId, String slug, String name, String summary, String iconUrl, Instant createdAt, Instant updatedAt) {
    }
}
