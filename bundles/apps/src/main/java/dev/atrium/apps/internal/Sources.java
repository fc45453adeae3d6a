package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.UpstreamFetch;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.treewalk.TreeWalk;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Where an app deployment's manifest and code come from: a repository of this server (by id, or by its clone URL) or
 * a public remote one, imported into the workspace through the repositories' import (its limits, its egress guard),
 * and the commit a ref names there.
 */
@Component(service = Sources.class)
public class Sources {

    static final Set<String> REF_TYPES = Set.of("branch", "tag", "commit");
    static final int MAX_MANIFEST_BYTES = 256 * 1024;
    private static final Pattern LOCAL_PATH = Pattern.compile("/git/([^/]+)/([^/]+?)(?:\\.git)?/?");
    private static final Pattern SHA = Pattern.compile("[0-9a-f]{40}");

    private final RepositoryRegistry repositories;
    private final SpaceDirectory spaces;
    private final UpstreamFetch upstream;

    @Activate
    public Sources(
            @Reference RepositoryRegistry repositories,
            @Reference SpaceDirectory spaces,
            @Reference UpstreamFetch upstream) {
        this.repositories = repositories;
        this.spaces = spaces;
        this.upstream = upstream;
    }

    /** A source resolved to a commit, with the manifest found there. */
    record Resolved(
            Repository repository, String repositoryUrl, String ref, String refType, String commit, String manifest) {
        ObjectNode json() {
            ObjectNode s = AppStore.JSON.createObjectNode();
            s.put("kind", "git_ref");
            s.put("repository_url", repositoryUrl);
            s.put("ref", ref);
            s.put("ref_type", refType);
            s.put("commit_sha", commit);
            s.put("resolved_repo_id", repository.id());
            return s;
        }
    }

    /**
     * Resolves {@code repositoryId} or {@code repositoryUrl} for {@code caller} in {@code space}: another Principal's
     * private repository is the same 404 as a missing one. A URL is this server's when its origin is {@code selfBase}
     * (the public base URL the request was answered under; null: any origin); a remote one is imported the first time
     * and fetched again before every later resolution, its branches read from the upstream's.
     */
    Resolved resolve(
            Caller caller,
            SpaceRef space,
            String repositoryId,
            String repositoryUrl,
            String ref,
            String refType,
            String selfBase) {
        Repository repo;
        String url = repositoryUrl;
        boolean remote = false;
        if (repositoryId != null) {
            repo = repositories.readable(caller, repositoryId).repository();
        } else {
            Optional<Repository> here = local(caller, repositoryUrl, selfBase);
            remote = here.isEmpty();
            repo = here.orElseGet(() -> imported(caller, space, repositoryUrl, ref, refType));
        }
        if (url == null) {
            url = repo.id();
        }
        String revision = switch (refType) {
            case "branch" -> "refs/heads/" + ref;
            case "tag" -> "refs/tags/" + ref;
            default -> {
                if (!SHA.matcher(ref).matches()) {
                    throw ApiException.badRequest("a ref of ref_type commit is a full 40-character commit id");
                }
                yield ref;
            }
        };
        String commit;
        try {
            commit = remote && "branch".equals(refType)
                    ? upstreamOrLocal(repo, ref)
                    : repositories.resolveCommit(repo, revision);
        } catch (ApiException e) {
            if (e.status() == 404) {
                throw ApiException.notFound("the repository has no " + refType + " " + ref);
            }
            throw e;
        }
        return new Resolved(repo, url, ref, refType, commit, manifest(repo, commit));
    }

    /** A branch as the upstream has it after the last fetch, else as imported. */
    private String upstreamOrLocal(Repository repo, String branch) {
        try {
            return repositories.resolveCommit(repo, UpstreamFetch.UPSTREAM_BRANCHES + branch);
        } catch (ApiException e) {
            if (e.status() != 404) {
                throw e;
            }
            return repositories.resolveCommit(repo, "refs/heads/" + branch);
        }
    }

    /** A repository of this server named by its clone URL ({@code …/git/<owner>/<name>.git}), as the caller reads it. */
    private Optional<Repository> local(Caller caller, String url, String selfBase) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (java.net.URISyntaxException e) {
            throw ApiException.badRequest("source.repository_url is not a URL: " + e.getMessage());
        }
        if (uri.getScheme() == null
                || !Set.of("http", "https").contains(uri.getScheme().toLowerCase(java.util.Locale.ROOT))
                || uri.getHost() == null) {
            throw ApiException.badRequest("source.repository_url must be an http(s) Git URL");
        }
        Matcher m = LOCAL_PATH.matcher(uri.getPath() == null ? "" : uri.getPath());
        if (!m.matches() || (selfBase != null && !sameOrigin(uri, URI.create(selfBase)))) {
            return Optional.empty();
        }
        Optional<SpaceRef> owner = spaces.byOwnerName(m.group(1));
        if (owner.isEmpty()) {
            return Optional.empty();
        }
        Optional<Repository> found = repositories.find(owner.get().id(), m.group(2));
        if (found.isEmpty()) {
            throw ApiException.notFound("repository not found");
        }
        return Optional.of(repositories.readable(caller, found.get().id()).repository());
    }

    /** Whether {@code a} and {@code b} have the same host and port (their schemes' default ports when not written). */
    static boolean sameOrigin(URI a, URI b) {
        return a.getHost() != null && a.getHost().equalsIgnoreCase(b.getHost()) && port(a) == port(b);
    }

    private static int port(URI u) {
        if (u.getPort() != -1) {
            return u.getPort();
        }
        return "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
    }

    /**
     * A public remote repository, imported into the workspace under a name made from its URL the first time, fetched
     * again every later time (unless the commit asked for is there already).
     */
    private Repository imported(Caller caller, SpaceRef space, String url, String ref, String refType) {
        String name =
                "app-source-" + dev.atrium.kernel.api.Digests.sha256Hex(url).substring(0, 12);
        Optional<Repository> existing = repositories.find(space.id(), name);
        if (existing.isPresent()) {
            if (!"commit".equals(refType) || !has(existing.get(), ref)) {
                upstream.fetchUpstream(caller, existing.get());
            }
            return existing.get();
        }
        return repositories
                .importRemote(
                        space.id(), name, "imported for app deployments from " + url, "private", URI.create(url), null)
                .repository();
    }

    private boolean has(Repository repo, String commit) {
        try {
            repositories.resolveCommit(repo, commit);
            return true;
        } catch (ApiException e) {
            return false;
        }
    }

    /** The text of {@code app.yml} (or {@code app.yaml}) at the root of {@code commit}. */
    String manifest(Repository repo, String commit) {
        try (org.eclipse.jgit.lib.Repository git = new FileRepositoryBuilder()
                        .setGitDir(repositories.directory(repo).toFile())
                        .setMustExist(true)
                        .build();
                RevWalk walk = new RevWalk(git)) {
            RevCommit c = walk.parseCommit(ObjectId.fromString(commit));
            for (String name : new String[] {"app.yml", "app.yaml"}) {
                try (TreeWalk tw = TreeWalk.forPath(git, name, c.getTree())) {
                    if (tw != null) {
                        ObjectLoader loader = git.open(tw.getObjectId(0));
                        if (loader.getSize() > MAX_MANIFEST_BYTES) {
                            throw ApiException.badRequest(name + " is larger than " + MAX_MANIFEST_BYTES + " bytes");
                        }
                        return new String(loader.getBytes(), StandardCharsets.UTF_8);
                    }
                }
            }
            throw new ApiException(
                    422, "INVALID_MANIFEST", "commit " + commit.substring(0, 12) + " has no app.yml at its root");
        } catch (IOException e) {
            throw new IllegalStateException("reading the repository failed", e);
        }
    }
}
