package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry.PushLock;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import dev.atrium.repos.api.UpstreamFetch;
import dev.atrium.repos.internal.RepositoryStore.Upstream;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.transport.FetchResult;
import org.eclipse.jgit.transport.RefSpec;
import org.eclipse.jgit.transport.TrackingRefUpdate;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A repository's upstream: the remote it was imported from (or that {@code fetch-remote} named), else the repository
 * it was forked from. A fetch brings the upstream's branches into {@code refs/remotes/upstream/*} (those gone upstream
 * are pruned) and its new tags into {@code refs/tags/*} (a local tag is never moved); a sync fetches, then
 * fast-forwards each local branch the upstream is ahead of, makes the branches only the upstream has, and leaves
 * the ones that diverged or are ahead as they are, saying so. Both hold the repository's push lock.
 */
@Component(service = {UpstreamSync.class, UpstreamFetch.class})
public class UpstreamSync implements UpstreamFetch {

    static final String REMOTE = UPSTREAM_BRANCHES;
    /** Counts of commits ahead and behind stop here: a branch far off says "at least". */
    static final int MAX_COUNT = 10_000;

    private static final Duration LOCK_WAIT = Duration.ofSeconds(10);

    /**
     * Upstream branches to {@code refs/remotes/upstream/*}, forced; tags under their names, only the ones the
     * repository does not have (a refspec without {@code +} still fast-forwards a tag: a local tag must never move).
     */
    private static CheckedFetch.Mapping upstream(Map<String, ObjectId> localTags, List<String> rejected) {
        return ref -> {
            String name = ref.getName();
            if (name.startsWith(Constants.R_HEADS)) {
                return new RefSpec("+" + name + ":" + REMOTE + name.substring(Constants.R_HEADS.length()));
            }
            ObjectId mine = localTags.get(name);
            if (mine == null) {
                return new RefSpec(name + ":" + name);
            }
            if (!mine.equals(ref.getObjectId())) {
                rejected.add(name.substring(Constants.R_TAGS.length()));
            }
            return null;
        };
    }

    private final Repositories repositories;
    private final RepositoryStore store;
    private final RepoAccess access;
    private final EgressGuard egress;

    @Activate
    public UpstreamSync(
            @Reference Repositories repositories,
            @Reference RepositoryStore store,
            @Reference RepoAccess access,
            @Reference EgressGuard egress) {
        this.repositories = repositories;
        this.store = store;
        this.access = access;
        this.egress = egress;
    }

    /** Points {@code refs/remotes/upstream/*} at the branches a new import or fork just copied: they are even. */
    static void track(org.eclipse.jgit.lib.Repository git) throws IOException {
        for (Ref head : git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS)) {
            RefUpdate u = git.updateRef(REMOTE + head.getName().substring(Constants.R_HEADS.length()));
            u.setNewObjectId(head.getObjectId());
            u.setForceUpdate(true);
            u.update();
        }
    }

    /** Where a fetch reads: a remote URL, or a repository of this server. */
    private record Source(String url, Repository repository, boolean partial) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", url != null ? "remote" : "fork");
            m.put("url", url);
            m.put("repository_id", repository == null ? null : repository.id());
            return m;
        }
    }

    /** What a fetch changed: every ref it moved, and the tags it refused to move. */
    record Fetched(List<Map<String, Object>> updated, List<String> rejectedTags) {}

    private Source source(Caller caller, Repository r) {
        Upstream row = store.upstream(r.id()).orElse(null);
        if (row != null && row.url() != null) {
            return new Source(row.url(), null, row.partial());
        }
        if (r.forkedFrom() != null) {
            try {
                return new Source(null, access.readable(caller, r.forkedFrom()).repo(), false);
            } catch (ApiException gone) {
                throw ApiException.conflict("the repository this one was forked from is gone, or you can no longer"
                        + " read it: fetch-remote can name another upstream");
            }
        }
        throw ApiException.conflict(
                "this repository has no upstream: it was neither imported nor forked;" + " fetch-remote names one");
    }

    /** Fetches the upstream. */
    Map<String, Object> fetch(Caller caller, Repository r, String token) {
        Source source = source(caller, r);
        try (PushLock lock = repositories.lockForPush(r, LOCK_WAIT)) {
            Fetched f = fetch(caller, r, source, token);
            return report(source, f, null);
        }
    }

    @Override
    public void fetchUpstream(Caller caller, Repository r) {
        fetch(caller, repositories.writable(caller, r.id()), null);
    }

    /** Names {@code url} the upstream and fetches it. */
    Map<String, Object> fetchRemote(Caller caller, Repository r, String url, String token) {
        URI remote;
        try {
            remote = new URI(url);
        } catch (URISyntaxException e) {
            throw ApiException.badRequest("url is not a valid URL");
        }
        boolean partial = store.upstream(r.id()).map(Upstream::partial).orElse(false);
        try (PushLock lock = repositories.lockForPush(r, LOCK_WAIT)) {
            Source source = new Source(remote.toString(), null, partial);
            Fetched f = fetch(caller, r, source, token);
            return report(new Source(storedUrl(r), null, partial), f, null);
        }
    }

    private String storedUrl(Repository r) {
        return store.upstream(r.id()).map(Upstream::url).orElse(null);
    }

    /** Fetches the upstream, then brings the local branches up to it where that is a fast-forward. */
    Map<String, Object> sync(Caller caller, Repository r, String token) {
        Source source = source(caller, r);
        try (PushLock lock = repositories.lockForPush(r, LOCK_WAIT)) {
            Fetched f = fetch(caller, r, source, token);
            List<Map<String, Object>> branches = new ArrayList<>();
            List<RefChange> changes = new ArrayList<>();
            boolean mergesOnly = repositories.mergesOnly(r);
            try (org.eclipse.jgit.lib.Repository git = repositories.open(r);
                    RevWalk walk = new RevWalk(git)) {
                for (Ref up : git.getRefDatabase().getRefsByPrefix(REMOTE)) {
                    String name = up.getName().substring(REMOTE.length());
                    Ref local = git.exactRef(Constants.R_HEADS + name);
                    Map<String, Object> b = compare(walk, name, local, up);
                    String state = (String) b.get("state");
                    if (state.equals("upstream_only") && !(walk.parseAny(up.getObjectId()) instanceof RevCommit)) {
                        b.put("state", "not_a_commit");
                    } else if (state.equals("behind") && mergesOnly && name.equals(r.defaultBranch())) {
                        // it takes merges of pull requests only: reported, never moved
                        b.put("state", "merges_only");
                    } else if (state.equals("behind") || state.equals("upstream_only")) {
                        ObjectId old = local == null ? ObjectId.zeroId() : local.getObjectId();
                        RefUpdate u = git.updateRef(Constants.R_HEADS + name);
                        u.setExpectedOldObjectId(old);
                        u.setNewObjectId(up.getObjectId());
                        u.setRefLogMessage("sync: fast-forward to upstream", false);
                        RefUpdate.Result result = u.update(walk);
                        if (result == RefUpdate.Result.NEW || result == RefUpdate.Result.FAST_FORWARD) {
                            changes.add(new RefChange(
                                    Constants.R_HEADS + name,
                                    old.name(),
                                    up.getObjectId().name()));
                            b.put("state", local == null ? "created" : "fast_forwarded");
                        } else {
                            b.put("state", "not_updated");
                            b.put("reason", result.name());
                        }
                    }
                    branches.add(b);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            repositories.pushed(r, caller.principalId(), changes);
            return report(source, f, branches);
        }
    }

    private Fetched fetch(Caller caller, Repository r, Source source, String token) {
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r)) {
            FetchResult result;
            Map<String, ObjectId> localTags = new TreeMap<>();
            for (Ref t : git.getRefDatabase().getRefsByPrefix(Constants.R_TAGS)) {
                localTags.put(t.getName(), t.getObjectId());
            }
            List<String> rejected = new ArrayList<>();
            CheckedFetch.Mapping mapping = upstream(localTags, rejected);
            ArchiveImport.Archived archived = null;
            if (source.url() != null) {
                egress.check(URI.create(source.url()));
                RemoteImport.Outcome outcome = RemoteImport.run(
                        egress,
                        URI.create(source.url()),
                        token,
                        repositories.importLimits(),
                        git,
                        mapping,
                        source.partial());
                result = outcome.result();
                archived = outcome.archived();
                if (!outcome.url().equals(storedUrl(r))) {
                    store.setUpstream(r.id(), outcome.url(), source.partial());
                }
            } else {
                result = CheckedFetch.fetch(
                        Git.wrap(git),
                        repositories.directory(source.repository()).toUri().toString(),
                        mapping,
                        c -> {},
                        null,
                        null,
                        false);
            }
            Fetched f = applied(caller, r, git, result, archived, rejected);
            store.fetched(r.id(), null);
            return f;
        } catch (ApiException e) {
            store.fetched(r.id(), e.getMessage());
            throw e;
        } catch (GitAPIException | IOException | RuntimeException e) {
            String why = "fetching from the upstream failed: "
                    + CheckedFetch.describe(e, repositories.directory(r).toString());
            store.fetched(r.id(), why);
            throw ApiException.badRequest(why);
        }
    }

    /** Prunes upstream branches the upstream no longer has, and publishes the tags the fetch made. */
    private Fetched applied(
            Caller caller,
            Repository r,
            org.eclipse.jgit.lib.Repository git,
            FetchResult result,
            ArchiveImport.Archived archived,
            List<String> rejected)
            throws IOException {
        Set<String> advertised = new TreeSet<>();
        List<Map<String, Object>> updated = new ArrayList<>();
        List<RefChange> tags = new ArrayList<>();
        if (archived != null) {
            // the archive gave the default branch only: the other upstream branches are kept as last fetched
            git.getRefDatabase()
                    .getRefsByPrefix(REMOTE)
                    .forEach(t -> advertised.add(Constants.R_HEADS + t.getName().substring(REMOTE.length())));
            if (!archived.before().equals(archived.after())) {
                updated.add(change(archived.localRef(), archived.before(), archived.after()));
            }
        }
        if (result != null) {
            result.getAdvertisedRefs().forEach(a -> advertised.add(a.getName()));
            for (TrackingRefUpdate u : result.getTrackingRefUpdates()) {
                String name = u.getLocalName();
                if (u.getResult() == RefUpdate.Result.REJECTED
                        || u.getResult() == RefUpdate.Result.LOCK_FAILURE
                        || u.getResult() == RefUpdate.Result.IO_FAILURE) {
                    if (name.startsWith(Constants.R_TAGS)) {
                        rejected.add(name.substring(Constants.R_TAGS.length()));
                    }
                    continue;
                }
                updated.add(change(name, u.getOldObjectId(), u.getNewObjectId()));
                if (name.startsWith(Constants.R_TAGS)) {
                    tags.add(new RefChange(
                            name, u.getOldObjectId().name(), u.getNewObjectId().name()));
                }
            }
        }
        for (Ref tracked : git.getRefDatabase().getRefsByPrefix(REMOTE)) {
            String branch = Constants.R_HEADS + tracked.getName().substring(REMOTE.length());
            if (!advertised.contains(branch)) {
                RefUpdate u = git.updateRef(tracked.getName());
                u.setExpectedOldObjectId(tracked.getObjectId());
                u.setForceUpdate(true);
                u.delete();
                updated.add(change(tracked.getName(), tracked.getObjectId(), ObjectId.zeroId()));
            }
        }
        repositories.pushed(r, caller.principalId(), tags);
        return new Fetched(updated, rejected);
    }

    private static Map<String, Object> change(String ref, ObjectId old, ObjectId now) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ref", ref);
        m.put("old_id", (old == null ? ObjectId.zeroId() : old).name());
        m.put("new_id", (now == null ? ObjectId.zeroId() : now).name());
        return m;
    }

    private Map<String, Object> report(Source source, Fetched f, List<Map<String, Object>> branches) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("upstream", source.json());
        m.put("updated_refs", f.updated());
        m.put("rejected_tags", f.rejectedTags());
        if (branches != null) {
            m.put("branches", branches);
        }
        return m;
    }

    /** The upstream, how its last fetch went, and where each branch stands against it. */
    Map<String, Object> status(Caller caller, Repository r) {
        Upstream row = store.upstream(r.id()).orElse(null);
        Map<String, Object> m = new LinkedHashMap<>();
        Source source;
        try {
            source = source(caller, r);
        } catch (ApiException none) {
            source = null;
        }
        m.put("upstream", source == null ? null : source.json());
        m.put(
                "last_fetch_at",
                row == null || row.lastFetchAt() == null
                        ? null
                        : row.lastFetchAt().toString());
        m.put("last_result", row == null ? null : row.lastResult());
        m.put("last_error", row == null ? null : row.lastError());
        m.put("partial", row != null && row.partial());
        List<Map<String, Object>> branches = new ArrayList<>();
        try (org.eclipse.jgit.lib.Repository git = repositories.open(r);
                RevWalk walk = new RevWalk(git)) {
            Map<String, Ref> local = new TreeMap<>();
            Map<String, Ref> upstream = new TreeMap<>();
            git.getRefDatabase()
                    .getRefsByPrefix(Constants.R_HEADS)
                    .forEach(ref -> local.put(ref.getName().substring(Constants.R_HEADS.length()), ref));
            git.getRefDatabase()
                    .getRefsByPrefix(REMOTE)
                    .forEach(ref -> upstream.put(ref.getName().substring(REMOTE.length()), ref));
            Set<String> names = new TreeSet<>(local.keySet());
            names.addAll(upstream.keySet());
            for (String name : names) {
                branches.add(compare(walk, name, local.get(name), upstream.get(name)));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        m.put("branches", branches);
        return m;
    }

    /**
     * A branch against its upstream: {@code state} is {@code even}, {@code behind} (a fast-forward brings it up),
     * {@code ahead}, {@code diverged}, {@code local_only} or {@code upstream_only}.
     */
    private static Map<String, Object> compare(RevWalk walk, String name, Ref local, Ref upstream) throws IOException {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("name", name);
        b.put("commit", local == null ? null : local.getObjectId().name());
        b.put(
                "upstream_commit",
                upstream == null ? null : upstream.getObjectId().name());
        if (local == null || upstream == null) {
            b.put("ahead", 0);
            b.put("behind", 0);
            b.put("state", local == null ? "upstream_only" : "local_only");
            return b;
        }
        RevCommit l;
        RevCommit u;
        try {
            l = walk.parseCommit(local.getObjectId());
            u = walk.parseCommit(upstream.getObjectId());
        } catch (org.eclipse.jgit.errors.IncorrectObjectTypeException
                | org.eclipse.jgit.errors.MissingObjectException e) {
            b.put("ahead", 0);
            b.put("behind", 0);
            b.put("state", "not_a_commit");
            return b;
        }
        int ahead = count(walk, l, u);
        int behind = count(walk, u, l);
        b.put("ahead", ahead);
        b.put("behind", behind);
        b.put("state", ahead == 0 && behind == 0 ? "even" : ahead == 0 ? "behind" : behind == 0 ? "ahead" : "diverged");
        return b;
    }

    /** Commits reachable from {@code from} and not from {@code not}, up to {@link #MAX_COUNT}. */
    private static int count(RevWalk walk, RevCommit from, RevCommit not) throws IOException {
        walk.reset();
        walk.markStart(walk.parseCommit(from));
        walk.markUninteresting(walk.parseCommit(not));
        int n = 0;
        while (n < MAX_COUNT && walk.next() != null) {
            n++;
        }
        return n;
    }
}
