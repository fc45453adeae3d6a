package dev.atrium.repos.api;

import java.time.Instant;

/**
 * A workspace's Git repository.
 *
 * @param visibility {@code public} (anyone may clone over Git smart HTTP) or {@code private}
 * @param isDefault  whether it is its workspace's default repository (the one {@code /api/spaces/:id/git/*} acts on)
 * @param forkedFrom the repository it was forked from, or null
 * @param allowForcePush whether a push may rewrite a branch (a non-fast-forward update or a deletion of the default branch is refused otherwise)
 */
public record Repository(
        String id,
        String spaceId,
        String name,
        String description,
        String visibility,
        String defaultBranch,
        boolean isDefault,
        String forkedFrom,
        boolean allowForcePush,
        Instant createdAt,
        Instant updatedAt) {

    public boolean isPublic() {
        return "public".equals(visibility);
    }
}
