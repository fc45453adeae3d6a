package dev.atrium.kernel.api;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Principals as anyone may see them, for capabilities that show people (profiles, follows): only active Principals
 * that chose a username, and only their public fields and the settings that say who may see their activity. It never
 * proves a caller may touch anything: workspaces it lists are named, not proven ({@link SpaceRef#provenFor()} null).
 *
 * @since 2.16
 */
@ProviderType
public interface PublicProfiles {

    /**
     * A Principal's public face.
     *
     * @param joinedAt           when the Principal was created
     * @param privateAccount     the {@code private_account} setting: follows need the owner's approval
     * @param activityVisibility the {@code activity_visibility} setting: {@code public}, {@code followers} or
     *                           {@code private}
     */
    record Profile(
            String principalId,
            String username,
            String name,
            String picture,
            Instant joinedAt,
            boolean privateAccount,
            String activityVisibility) {}

    /** The active Principal with this username (case-insensitive), or empty. */
    Optional<Profile> byUsername(String username);

    /** The active Principal with this id, when it has a username; empty otherwise. */
    Optional<Profile> byId(String principalId);

    /**
     * Active Principals with a username, ordered by username; {@code query} (null or blank for all) matches a part of
     * the username or the display name, case-insensitive.
     */
    List<Profile> search(String query, int limit, int offset);

    /** How many Principals {@link #search} finds for {@code query}. */
    long count(String query);

    /** The active workspaces of an active Principal, oldest first; named, not proven for anyone. */
    List<SpaceRef> workspaces(String principalId);
}
