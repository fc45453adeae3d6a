package dev.atrium.store.inventory.internal;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** What the publisher needs to know of repositories and stores (the OSGi services behind it: {@link Model}). */
interface Directory {

    /** A repository as it is now. */
    record RepoView(
            String id,
            String spaceId,
            String owner,
            String name,
            String description,
            boolean isPublic,
            String defaultBranch,
            String defaultBranchHash,
            Instant createdAt,
            Instant updatedAt) {

        String actorPath() {
            return Model.repoPath(owner, name);
        }
    }

    /** A published store. */
    record StoreView(String id, String slug) {

        String actorPath() {
            return Model.storePath(slug);
        }
    }

    /** The repository named {@code name} in workspace {@code spaceId}, with its owner's public name. */
    Optional<RepoView> repository(String spaceId, String name);

    /** The stores of workspace {@code spaceId} in automatic mode (no explicit inventory): they list its public repositories. */
    List<StoreView> automaticStores(String spaceId);

    /** The stores whose explicit inventory names the local repository actor at {@code actorPath}. */
    List<StoreView> explicitStores(String actorPath);
}
