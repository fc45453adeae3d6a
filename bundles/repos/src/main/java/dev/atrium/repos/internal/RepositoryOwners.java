package dev.atrium.repos.internal;

import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Who owns a public repository's workspace, as the kernel says, for lists that show an owner on every item. The
 * kernel's answer is kept a short while per workspace (a page of twenty items asks once per workspace, not forty
 * times); a suspended owner's repositories leave the lists when the entry expires.
 */
@Component(service = RepositoryOwners.class)
public class RepositoryOwners {

    /** How long the kernel's answer for one workspace is reused. */
    static final Duration KEPT = Duration.ofSeconds(60);

    private static final int MOST_KEPT = 50_000;

    /**
     * The owner of a workspace.
     *
     * @param username the owner's username, or null when they chose none
     * @param path     how Git and explore name the workspace in a path: the username for a default workspace, the
     *                 workspace's slug otherwise ({@code /git/:path/:repo.git}, {@code by-name/:path/:repo})
     */
    record Owner(String principalId, String username, String path, SpaceRef space) {}

    private record Kept(Optional<Owner> owner, long until) {}

    private final SpaceDirectory spaces;
    private final PrincipalDirectory principals;
    private final ConcurrentHashMap<String, Kept> kept = new ConcurrentHashMap<>();

    @Activate
    public RepositoryOwners(@Reference SpaceDirectory spaces, @Reference PrincipalDirectory principals) {
        this.spaces = spaces;
        this.principals = principals;
    }

    /** The owner of workspace {@code spaceId}, or empty when the kernel does not vouch for it (suspended, removed). */
    Optional<Owner> of(String spaceId) {
        long now = System.nanoTime();
        Kept k = kept.get(spaceId);
        if (k != null && k.until() - now > 0) {
            return k.owner();
        }
        Optional<Owner> owner = spaces.byId(spaceId).map(this::owner);
        if (kept.size() > MOST_KEPT) {
            kept.clear();
        }
        kept.put(spaceId, new Kept(owner, now + KEPT.toNanos()));
        return owner;
    }

    /** The workspace a Git owner name names: a username (their default workspace) or a workspace slug. */
    Optional<Owner> byPath(String usernameOrSlug) {
        return spaces.byOwnerName(usernameOrSlug).map(this::owner);
    }

    private Owner owner(SpaceRef space) {
        String username = principals
                .get(space.ownerPrincipalId())
                .map(PrincipalDirectory.Entry::username)
                .orElse(null);
        String path = space.isDefault() && username != null ? username : space.slug();
        return new Owner(space.ownerPrincipalId(), username, path, space);
    }
}
