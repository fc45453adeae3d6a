package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.repos.internal.ExploreStore.Listed;
import dev.atrium.repos.internal.RepositoryOwners.Owner;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A public repository as explore shows it: never its workspace's id, only the owner's public name. A repository
 * whose owner the kernel no longer vouches for (suspended) is left out, as the repository routes refuse it.
 */
@Component(service = ExploreViews.class)
public class ExploreViews {

    private final RepositoryOwners owners;
    private final PublicUrls urls;

    @Activate
    public ExploreViews(@Reference RepositoryOwners owners, @Reference PublicUrls urls) {
        this.owners = owners;
        this.urls = urls;
    }

    /** The caller of an optional-auth route, or null for an anonymous one. */
    static Caller callerOrNull(SecurityContext sc) {
        return sc != null && sc.getUserPrincipal() instanceof Caller c && c.principalId() != null ? c : null;
    }

    /** The owner of a workspace whose repository is listed, or empty when the kernel does not vouch for it. */
    Optional<Owner> ownerOfSpace(String spaceId) {
        return owners.of(spaceId);
    }

    Optional<Map<String, Object>> item(Listed l, URI requestBase) {
        return owners.of(l.repo().spaceId()).map(o -> item(l, o, requestBase));
    }

    List<Map<String, Object>> items(List<Listed> listed, URI requestBase) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Listed l : listed) {
            item(l, requestBase).ifPresent(out::add);
        }
        return out;
    }

    Map<String, Object> item(Listed l, Owner o, URI requestBase) {
        String base = urls.base(requestBase);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", l.repo().id());
        m.put("name", l.repo().name());
        m.put("full_name", o.path() + "/" + l.repo().name());
        Map<String, Object> owner = new LinkedHashMap<>();
        owner.put("username", o.username());
        owner.put("path", o.path());
        m.put("owner", owner);
        m.put("description", l.repo().description());
        m.put("topics", l.topics());
        m.put("language", l.language());
        m.put("stars", l.stars());
        m.put("forks", l.forks());
        m.put("fork", l.repo().forkedFrom() != null);
        m.put("default_branch", l.repo().defaultBranch());
        m.put("clone_url", base + "/git/" + o.space().slug() + "/" + l.repo().name() + ".git");
        m.put("created_at", l.repo().createdAt().toString());
        m.put("updated_at", l.repo().updatedAt().toString());
        m.put("pushed_at", l.pushedAt() == null ? null : l.pushedAt().toString());
        return m;
    }

    /** The owner a path names, or 404 as for a missing repository. */
    Owner owner(String usernameOrSlug) {
        return owners.byPath(usernameOrSlug).orElseThrow(() -> ApiException.notFound(RepoAccess.NOT_FOUND));
    }

    /** The user a username names (a username only, not a workspace slug), or 404 {@code user not found}. */
    Owner ownerOrUserNotFound(String username) {
        return owners.byPath(username)
                .filter(o -> o.username() != null && o.username().equalsIgnoreCase(username))
                .orElseThrow(() -> ApiException.notFound("user not found"));
    }

    /** A Git owner name from a query filter: empty when it names nobody. */
    Optional<Owner> ownerFilter(String usernameOrSlug) {
        return owners.byPath(usernameOrSlug);
    }
}
