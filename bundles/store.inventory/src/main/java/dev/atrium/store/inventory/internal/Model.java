package dev.atrium.store.inventory.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.store.ap.api.LocalStores;
import dev.atrium.store.ap.api.LocalStores.LocalStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.ws.rs.core.UriInfo;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Model A's view of the instance: local repositories and stores as actors, their paths, and the public base URL. Only
 * public repositories of live workspaces are actors; anything else is 404, exactly like a missing one.
 */
@Component(service = Model.class)
public class Model implements Directory {

    private final RepositoryRegistry repositories;
    private final SpaceDirectory spaces;
    private final LocalStores stores;
    private final PublicUrls urls;
    /** The base the last request came in by, for matching explicit inventories when no public base URL is configured. */
    private volatile String lastBase;

    @Activate
    public Model(
            @Reference RepositoryRegistry repositories,
            @Reference SpaceDirectory spaces,
            @Reference LocalStores stores,
            @Reference PublicUrls urls) {
        this.repositories = repositories;
        this.spaces = spaces;
        this.stores = stores;
        this.urls = urls;
    }

    static String repoPath(String owner, String name) {
        return "/ap/repos/" + owner + "/" + name;
    }

    static String storePath(String slug) {
        return "/ap/stores/" + slug;
    }

    /** The base URL a request's documents are built on (the configured public base, else the request's). */
    String base(UriInfo uri) {
        String base = urls.base(uri.getBaseUri());
        lastBase = base;
        return base;
    }

    /** A published store and its workspace. */
    record Published(LocalStore store, SpaceRef space) {
        String path() {
            return storePath(store.slug());
        }
    }

    Published store(String slug) {
        LocalStore store = stores.bySlug(slug).orElseThrow(() -> ApiException.notFound("store not found"));
        SpaceRef space = spaces.byId(store.spaceId()).orElseThrow(() -> ApiException.notFound("store not found"));
        return new Published(store, space);
    }

    /** A public repository by its owner's public name (workspace slug or username) and name, else 404. */
    RepoView publicRepository(String owner, String name) {
        SpaceRef space = spaces.byOwnerName(owner).orElseThrow(() -> ApiException.notFound("repository not found"));
        return repositories
                .find(space.id(), name)
                .filter(Repository::isPublic)
                .map(r -> view(space, r))
                .orElseThrow(() -> ApiException.notFound("repository not found"));
    }

    private boolean isPublicActor(String ownerAndName) {
        String[] parts = ownerAndName.split("/", -1);
        if (parts.length != 2) {
            return false;
        }
        try {
            publicRepository(parts[0], parts[1]);
            return true;
        } catch (ApiException notPublic) {
            return false;
        }
    }

    /** The public repositories of a workspace, oldest first. */
    List<RepoView> publicRepositories(SpaceRef space) {
        return repositories.list(space.id()).stream()
                .filter(Repository::isPublic)
                .map(r -> view(space, r, false))
                .toList();
    }

    /** A store's inventory: its explicit one (repository actor URIs) or, when empty, its workspace's public repositories. */
    List<String> inventory(Published p, String base) {
        List<String> explicit = stores.inventory(p.store().id());
        if (!explicit.isEmpty()) {
            // a local repository listed explicitly and since made private (or deleted) is not shown
            String local = base + "/ap/repos/";
            return explicit.stream()
                    .filter(uri -> !uri.startsWith(local) || isPublicActor(uri.substring(local.length())))
                    .toList();
        }
        return publicRepositories(p.space()).stream()
                .map(r -> base + r.actorPath())
                .toList();
    }

    /** The stores that list a local repository: automatic ones of its workspace, explicit ones naming it. */
    List<LocalStore> storesOf(RepoView r, String base) {
        List<LocalStore> out = new ArrayList<>();
        for (LocalStore s : stores.ofSpace(r.spaceId())) {
            if (stores.inventory(s.id()).isEmpty()) {
                out.add(s);
            }
        }
        for (LocalStore s : stores.listing(base + r.actorPath())) {
            if (spaces.byId(s.spaceId()).isPresent() && out.stream().noneMatch(o -> o.id().equals(s.id()))) {
                out.add(s);
            }
        }
        return out;
    }

    @Override
    public Optional<RepoView> repository(String spaceId, String name) {
        Optional<SpaceRef> space = spaces.byId(spaceId);
        if (space.isEmpty()) {
            return Optional.empty();
        }
        return repositories.find(spaceId, name).map(r -> view(space.get(), r));
    }

    @Override
    public List<StoreView> automaticStores(String spaceId) {
        if (spaces.byId(spaceId).isEmpty()) {
            return List.of();
        }
        return stores.ofSpace(spaceId).stream()
                .filter(s -> stores.inventory(s.id()).isEmpty())
                .map(s -> new StoreView(s.id(), s.slug()))
                .toList();
    }

    @Override
    public List<StoreView> explicitStores(String actorPath) {
        Set<String> bases = new LinkedHashSet<>();
        urls.configured().ifPresent(bases::add);
        if (lastBase != null) {
            bases.add(lastBase);
        }
        List<StoreView> out = new ArrayList<>();
        for (String base : bases) {
            for (LocalStore s : stores.listing(base + actorPath)) {
                if (spaces.byId(s.spaceId()).isPresent() && out.stream().noneMatch(o -> o.id().equals(s.id()))) {
                    out.add(new StoreView(s.id(), s.slug()));
                }
            }
        }
        return out;
    }

    private RepoView view(SpaceRef space, Repository r) {
        return view(space, r, true);
    }

    private RepoView view(SpaceRef space, Repository r, boolean withHash) {
        return new RepoView(
                r.id(),
                space.id(),
                space.slug(),
                r.name(),
                r.description(),
                r.isPublic(),
                r.defaultBranch(),
                withHash ? defaultBranchHash(r) : null,
                r.createdAt(),
                r.updatedAt());
    }

    /** The commit the default branch points at, or null while the repository has none. */
    private String defaultBranchHash(Repository r) {
        try (org.eclipse.jgit.lib.Repository git = new FileRepositoryBuilder()
                .setGitDir(repositories.directory(r).toFile())
                .setMustExist(true)
                .build()) {
            Ref ref = git.exactRef("refs/heads/" + r.defaultBranch());
            return ref == null || ref.getObjectId() == null
                    ? null
                    : ref.getObjectId().name();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
