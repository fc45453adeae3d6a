package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Who may do what to a repository addressed by id, decided by the kernel: its owner (proved by
 * {@link OwnerScope}) reads and writes; anyone signed in reads a public one and is refused (403) writing it;
 * a private repository of someone else is 404 exactly like a missing one.
 */
@Component(service = RepoAccess.class)
public class RepoAccess {

    static final String NOT_FOUND = "repository not found";

    private final OwnerScope ownerScope;
    private final SpaceDirectory spaces;
    private final RepositoryStore store;
    private final PublicUrls urls;

    @Activate
    public RepoAccess(
            @Reference OwnerScope ownerScope,
            @Reference SpaceDirectory spaces,
            @Reference RepositoryStore store,
            @Reference PublicUrls urls) {
        this.ownerScope = ownerScope;
        this.spaces = spaces;
        this.store = store;
        this.urls = urls;
    }

    /** A repository with the workspace it belongs to. */
    record Located(Repository repo, SpaceRef space, boolean owned) {}

    /** {@code caller} null: an anonymous reader, who reads public repositories only. */
    Located readable(Caller caller, String repoId) {
        Repository r = store.byId(repoId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        Optional<SpaceRef> owned = owned(caller, r.spaceId());
        if (owned.isPresent()) {
            return new Located(r, owned.get(), true);
        }
        if (r.isPublic()) {
            Optional<SpaceRef> space = spaces.byId(r.spaceId());
            if (space.isPresent()) {
                return new Located(r, space.get(), false);
            }
        }
        throw ApiException.notFound(NOT_FOUND);
    }

    Located writable(Caller caller, String repoId) {
        Located l = readable(caller, repoId);
        if (!l.owned()) {
            throw ApiException.forbidden("only the owner of this repository may change it");
        }
        return l;
    }

    private Optional<SpaceRef> owned(Caller caller, String spaceId) {
        if (caller == null) {
            return Optional.empty(); // an anonymous reader of an optional-auth route reads public repositories only
        }
        try {
            return Optional.of(ownerScope.require(caller, spaceId));
        } catch (ApiException notOwned) {
            return Optional.empty();
        }
    }

    /** The repository's wire form; {@code clone_url} uses the operator's public base URL, the request's only when unset. */
    Map<String, Object> json(Repository r, SpaceRef space, URI requestBase, long stars) {
        String base = urls.base(requestBase);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id());
        m.put("space_id", r.spaceId());
        m.put("name", r.name());
        m.put("description", r.description());
        m.put("visibility", r.visibility());
        m.put("default_branch", r.defaultBranch());
        m.put("is_default", r.isDefault());
        m.put("forked_from", r.forkedFrom());
        m.put("allow_force_push", r.allowForcePush());
        m.put("merges_only", store.mergesOnly(r.id()));
        m.put("clone_url", base + "/git/" + space.slug() + "/" + r.name() + ".git");
        m.put("stars", stars);
        RepositoryStore.Explored e = store.explored(r.id());
        m.put("topics", e.topics());
        m.put("language", e.language());
        m.put("catalog", e.inCatalog());
        m.put("created_at", r.createdAt().toString());
        m.put("updated_at", r.updatedAt().toString());
        return m;
    }
}
