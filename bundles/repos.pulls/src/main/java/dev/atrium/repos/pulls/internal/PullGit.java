package dev.atrium.repos.pulls.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.PushLock;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.dircache.DirCache;
import org.eclipse.jgit.dircache.DirCacheBuilder;
import org.eclipse.jgit.dircache.DirCacheEditor;
import org.eclipse.jgit.dircache.DirCacheEntry;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.merge.ContentMergeStrategy;
import org.eclipse.jgit.merge.MergeStrategy;
import org.eclipse.jgit.merge.ResolveMerger;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevSort;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.revwalk.filter.RevFilter;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.RefSpec;
import org.eclipse.jgit.transport.TagOpt;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * What pull requests do in Git, on JGit in memory (no working tree): bring a fork's head into the base repository,
 * check a three-way merge, merge by three strategies, and commit a resolution of conflicts on the head branch (the
 * diffs are {@link PullDiffs}').
 * Every ref it writes it writes under the repository's push lock with the ref's old value as a precondition.
 */
final class PullGit {

    static final Duration LOCK_WAIT = Duration.ofSeconds(10);
    /** A read does not wait long to bring a fork's head: it keeps the last one (the push that holds it brings it). */
    static final Duration HEAD_LOCK_WAIT = Duration.ofSeconds(2);

    private final RepositoryRegistry registry;

    PullGit(RepositoryRegistry registry) {
        this.registry = registry;
    }

    org.eclipse.jgit.lib.Repository open(Repository r) {
        try {
            return new FileRepositoryBuilder()
                    .setGitDir(registry.directory(r).toFile())
                    .setMustExist(true)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The commit {@code branch} points at, or null when there is no such branch. */
    String branch(Repository r, String branch) {
        try (org.eclipse.jgit.lib.Repository git = open(r)) {
            Ref ref = git.exactRef(Constants.R_HEADS + branch);
            return ref == null ? null : ref.getObjectId().name();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Points {@code headRef} of the base repository at the head branch's commit: fetched from the fork when the head
     * is a fork's (the fork's objects were checked when they were pushed there).
     *
     * @return the head commit
     * @throws ApiException 409 when the head branch no longer exists
     */
    String bringHead(Repository base, Repository head, String headBranch, String headRef) {
        String commit = branch(head, headBranch);
        if (commit == null) {
            throw ApiException.conflict("the head branch " + headBranch + " does not exist");
        }
        try (org.eclipse.jgit.lib.Repository git = open(base)) {
            Ref kept = git.exactRef(headRef);
            if (kept != null && kept.getObjectId().name().equals(commit)) {
                return commit; // nothing moved: no fetch, no lock (every read of a pull request comes here)
            }
            if (!base.id().equals(head.id())) {
                // a fetch writes a pack into the base repository: under its push lock, like every other writer of
                // objects, so that an upstream fetch that removes what it brought over its limit never takes this one's
                try (PushLock lock = registry.lockForPush(base, HEAD_LOCK_WAIT);
                        Git g = Git.wrap(git)) {
                    g.fetch()
                            .setRemote(registry.directory(head).toUri().toString())
                            .setRefSpecs(new RefSpec("+" + Constants.R_HEADS + headBranch + ":" + headRef))
                            .setTagOpt(TagOpt.NO_TAGS)
                            .call();
                }
                Ref fetched = git.exactRef(headRef);
                if (fetched == null) {
                    throw ApiException.conflict("the head branch " + headBranch + " does not exist");
                }
                return fetched.getObjectId().name();
            } else {
                RefUpdate u = git.updateRef(headRef);
                u.setNewObjectId(ObjectId.fromString(commit));
                u.setForceUpdate(true);
                u.disableRefLog();
                u.update();
            }
            return commit;
        } catch (GitAPIException | IOException e) {
            throw new IllegalStateException("could not bring the head of " + head.id() + " into " + base.id(), e);
        }
    }

    /** Where head left base (the PR's changes are what head did since), or null for unrelated histories. */
    static RevCommit mergeBase(RevWalk walk, String baseCommit, String headCommit) throws IOException {
        walk.reset();
        walk.setRevFilter(RevFilter.MERGE_BASE);
        walk.markStart(walk.parseCommit(ObjectId.fromString(baseCommit)));
        walk.markStart(walk.parseCommit(ObjectId.fromString(headCommit)));
        RevCommit found = walk.next();
        walk.reset();
        walk.setRevFilter(RevFilter.ALL);
        return found == null ? null : walk.parseCommit(found);
    }

    /** The blob id of {@code path} at {@code commit}, or null when it has none there. */
    static ObjectId blob(org.eclipse.jgit.lib.Repository git, String commit, String path) throws IOException {
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit c = walk.parseCommit(ObjectId.fromString(commit));
            try (TreeWalk t = TreeWalk.forPath(git, path, c.getTree())) {
                return t == null ? null : t.getObjectId(0);
            }
        }
    }

    // ------------------------------------------------------------------------------------------- merge check

    /** A three-way merge of head into base, in memory: clean, or the paths that conflict and how. */
    PullStore.Check check(Repository base, String baseCommit, String headCommit) {
        try (org.eclipse.jgit.lib.Repository git = open(base);
                RevWalk walk = new RevWalk(git)) {
            RevCommit b = walk.parseCommit(ObjectId.fromString(baseCommit));
            RevCommit h = walk.parseCommit(ObjectId.fromString(headCommit));
            ResolveMerger m = (ResolveMerger) MergeStrategy.RECURSIVE.newMerger(git, true);
            if (m.merge(b, h)) {
                return new PullStore.Check(true, List.of());
            }
            RevCommit mb = mergeBase(walk, baseCommit, headCommit);
            List<Map<String, String>> conflicts = new ArrayList<>();
            for (String path : new TreeSet<>(m.getUnmergedPaths())) {
                conflicts.add(Map.of("path", path, "kind", kind(git, mb, b, h, path)));
            }
            return new PullStore.Check(false, conflicts);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code content} (both changed the same lines), {@code add_add}, or {@code modify_delete}. */
    private static String kind(
            org.eclipse.jgit.lib.Repository git, RevCommit mergeBase, RevCommit base, RevCommit head, String path)
            throws IOException {
        boolean inBase = blob(git, base.name(), path) != null;
        boolean inHead = blob(git, head.name(), path) != null;
        boolean inMergeBase = mergeBase != null && blob(git, mergeBase.name(), path) != null;
        if (inBase && inHead) {
            return inMergeBase ? "content" : "add_add";
        }
        return "modify_delete";
    }

    // ------------------------------------------------------------------------------------------------- merge

    /** What a merge made: the base branch's change, the new commit, and the head commit it merged. */
    record Merged(RefChange change, String commit, String head) {}

    /**
     * Merges the head ({@code headRef} of the base repository) into the base branch by {@code strategy}. The caller
     * holds the base repository's push lock.
     *
     * @param expectedBase the base commit the caller checked, or null
     * @param expectedHead the head commit the caller reviewed, or null
     * @throws ApiException 409 when the base moved since {@code expectedBase} or while merging, on conflicts, or when
     *                      there is nothing to merge; nothing changes then
     */
    Merged merge(
            Repository base,
            String baseBranch,
            String headRef,
            String strategy,
            String expectedBase,
            String expectedHead,
            PersonIdent merger,
            String message) {
        try (org.eclipse.jgit.lib.Repository git = open(base);
                RevWalk walk = new RevWalk(git);
                ObjectInserter ins = git.newObjectInserter()) {
            Ref baseRef = git.exactRef(Constants.R_HEADS + baseBranch);
            Ref headRefNow = git.exactRef(headRef);
            if (baseRef == null) {
                throw ApiException.conflict("the base branch " + baseBranch + " no longer exists");
            }
            if (headRefNow == null) {
                throw ApiException.conflict("the head is no longer here");
            }
            ObjectId baseId = baseRef.getObjectId();
            if (expectedBase != null && !baseId.name().equals(expectedBase)) {
                throw ApiException.conflict("the base branch moved since " + expectedBase + " (it is at "
                        + baseId.name() + "): check the pull request again");
            }
            if (expectedHead != null && !headRefNow.getObjectId().name().equals(expectedHead)) {
                throw ApiException.conflict("the head moved since " + expectedHead + " (it is at "
                        + headRefNow.getObjectId().name() + "): review it again");
            }
            RevCommit b = walk.parseCommit(baseId);
            RevCommit h = walk.parseCommit(headRefNow.getObjectId());
            if (walk.isMergedInto(h, b)) {
                throw ApiException.conflict("nothing to merge: the base branch already has every commit of the head");
            }
            ObjectId result = switch (strategy) {
                case "merge" -> commit(ins, mergedTree(git, b, h), List.of(b, h), merger, merger, message);
                case "squash" -> commit(ins, mergedTree(git, b, h), List.of(b), h.getAuthorIdent(), merger, message);
                case "rebase" -> replay(git, walk, ins, b, h, merger);
                default -> throw ApiException.badRequest("strategy must be merge, squash or rebase");
            };
            ins.flush();
            if (walk.parseCommit(result).getTree().equals(b.getTree())) {
                throw ApiException.conflict("nothing to merge: the base branch already has every change of the head");
            }
            RefUpdate u = git.updateRef(Constants.R_HEADS + baseBranch);
            u.setExpectedOldObjectId(baseId);
            u.setNewObjectId(result);
            u.setRefLogMessage("pull request: " + strategy, false);
            RefUpdate.Result r = u.update(walk);
            if (r != RefUpdate.Result.FAST_FORWARD) {
                throw ApiException.conflict(
                        "the base branch moved while merging (" + r + "); nothing changed: check again");
            }
            return new Merged(
                    new RefChange(Constants.R_HEADS + baseBranch, baseId.name(), result.name()),
                    result.name(),
                    h.name());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ObjectId mergedTree(org.eclipse.jgit.lib.Repository git, RevCommit base, RevCommit head)
            throws IOException {
        ResolveMerger m = (ResolveMerger) MergeStrategy.RECURSIVE.newMerger(git, true);
        if (!m.merge(base, head)) {
            throw ApiException.conflict("the head conflicts with the base in "
                    + String.join(", ", new TreeSet<>(m.getUnmergedPaths())) + ": resolve the conflicts first");
        }
        return m.getResultTreeId();
    }

    /** The head's own commits replayed on the base one by one: new ids, the same changes, authors and messages. */
    private static ObjectId replay(
            org.eclipse.jgit.lib.Repository git,
            RevWalk walk,
            ObjectInserter ins,
            RevCommit base,
            RevCommit head,
            PersonIdent committer)
            throws IOException {
        List<RevCommit> own = new ArrayList<>();
        try (RevWalk w = new RevWalk(git)) {
            w.sort(RevSort.TOPO);
            w.sort(RevSort.REVERSE, true);
            w.markStart(w.parseCommit(head));
            w.markUninteresting(w.parseCommit(base));
            for (RevCommit c = w.next(); c != null; c = w.next()) {
                if (c.getParentCount() != 1) {
                    throw ApiException.conflict(
                            "the head has merge commits, which a rebase does not replay: merge or" + " squash instead");
                }
                own.add(c);
            }
        }
        RevCommit onto = base;
        for (RevCommit c : own) {
            ResolveMerger m = (ResolveMerger) MergeStrategy.RECURSIVE.newMerger(git, true);
            m.setBase(c.getParent(0));
            if (!m.merge(onto, c)) {
                throw ApiException.conflict("commit " + c.abbreviate(10).name() + " does not apply on the base ("
                        + String.join(", ", new TreeSet<>(m.getUnmergedPaths())) + "): merge instead, or rebase it");
            }
            ObjectId id =
                    commit(ins, m.getResultTreeId(), List.of(onto), c.getAuthorIdent(), committer, c.getFullMessage());
            ins.flush();
            onto = walk.parseCommit(id);
        }
        return onto;
    }

    private static ObjectId commit(
            ObjectInserter ins,
            ObjectId tree,
            List<? extends ObjectId> parents,
            PersonIdent author,
            PersonIdent committer,
            String message)
            throws IOException {
        CommitBuilder c = new CommitBuilder();
        c.setTreeId(tree);
        c.setParentIds(parents.toArray(new ObjectId[0]));
        c.setAuthor(author);
        c.setCommitter(committer);
        c.setMessage(message.endsWith("\n") ? message : message + "\n");
        return ins.insert(c);
    }

    // ------------------------------------------------------------------------------------------------ resolve

    /**
     * Commits, on the head branch, the merge of the base into it with the caller's content for each conflicting path
     * (Git's "resolve conflicts" merge commit). Made in the head's repository, the base's commit fetched there first.
     *
     * @return the head branch's change
     * @throws ApiException 400 when the resolutions do not name exactly the conflicting paths; 409 when nothing
     *                      conflicts, when a conflict is not of content, or when the head moved
     */
    RefChange resolve(
            Repository baseRepo,
            String baseBranch,
            Repository headRepo,
            String headBranch,
            String expectedHead,
            Map<String, byte[]> resolutions,
            PersonIdent who,
            String message) {
        try (PushLock lock = registry.lockForPush(headRepo, LOCK_WAIT);
                org.eclipse.jgit.lib.Repository git = open(headRepo);
                RevWalk walk = new RevWalk(git);
                ObjectInserter ins = git.newObjectInserter();
                ObjectReader reader = git.newObjectReader()) {
            String baseRef = Constants.R_HEADS + baseBranch;
            if (!baseRepo.id().equals(headRepo.id())) {
                baseRef = "refs/atrium/pull-base";
                try (Git g = Git.wrap(git)) {
                    g.fetch()
                            .setRemote(registry.directory(baseRepo).toUri().toString())
                            .setRefSpecs(new RefSpec("+" + Constants.R_HEADS + baseBranch + ":" + baseRef))
                            .setTagOpt(TagOpt.NO_TAGS)
                            .call();
                }
            }
            Ref baseNow = git.exactRef(baseRef);
            if (baseNow == null) {
                throw ApiException.conflict("the base branch " + baseBranch + " no longer exists");
            }
            Ref headRef = git.exactRef(Constants.R_HEADS + headBranch);
            if (headRef == null) {
                throw ApiException.conflict("the head branch " + headBranch + " does not exist");
            }
            if (!headRef.getObjectId().name().equals(expectedHead)) {
                throw ApiException.conflict(
                        "the head branch moved since the pull request was last read: read it again");
            }
            RevCommit h = walk.parseCommit(headRef.getObjectId());
            RevCommit b = walk.parseCommit(baseNow.getObjectId());
            ResolveMerger plain = (ResolveMerger) MergeStrategy.RECURSIVE.newMerger(git, true);
            if (plain.merge(h, b)) {
                throw ApiException.conflict("nothing to resolve: the head merges with the base cleanly");
            }
            Set<String> conflicting = new TreeSet<>(plain.getUnmergedPaths());
            Set<String> missing = new TreeSet<>(conflicting);
            missing.removeAll(resolutions.keySet());
            Set<String> extra = new TreeSet<>(resolutions.keySet());
            extra.removeAll(conflicting);
            if (!missing.isEmpty() || !extra.isEmpty()) {
                throw ApiException.badRequest("resolutions must name exactly the conflicting paths "
                        + conflicting + (missing.isEmpty() ? "" : "; missing " + missing)
                        + (extra.isEmpty() ? "" : "; not in conflict " + extra));
            }
            ResolveMerger ours = (ResolveMerger) MergeStrategy.RECURSIVE.newMerger(git, true);
            ours.setContentMergeStrategy(ContentMergeStrategy.OURS);
            if (!ours.merge(h, b)) {
                throw ApiException.conflict("a conflict of " + new TreeSet<>(ours.getUnmergedPaths())
                        + " is not of content (a file deleted on one side): resolve it with git");
            }
            DirCache index = DirCache.newInCore();
            DirCacheBuilder builder = index.builder();
            builder.addTree(new byte[0], DirCacheEntry.STAGE_0, reader, ours.getResultTreeId());
            builder.finish();
            DirCacheEditor editor = index.editor();
            for (Map.Entry<String, byte[]> r : resolutions.entrySet()) {
                ObjectId blob = ins.insert(Constants.OBJ_BLOB, r.getValue());
                editor.add(new DirCacheEditor.PathEdit(r.getKey()) {
                    @Override
                    public void apply(DirCacheEntry ent) {
                        if (ent.getFileMode() == null || ent.getRawMode() == 0) {
                            ent.setFileMode(FileMode.REGULAR_FILE);
                        }
                        ent.setObjectId(blob);
                    }
                });
            }
            editor.finish();
            ObjectId tree = index.writeTree(ins);
            ObjectId commit = commit(ins, tree, List.of(h, b), who, who, message);
            ins.flush();
            RefUpdate u = git.updateRef(Constants.R_HEADS + headBranch);
            u.setExpectedOldObjectId(h);
            u.setNewObjectId(commit);
            u.setRefLogMessage("pull request: conflicts resolved", false);
            RefUpdate.Result result = u.update(walk);
            if (result != RefUpdate.Result.FAST_FORWARD) {
                throw ApiException.conflict("the head branch moved while resolving (" + result + "); nothing changed");
            }
            return new RefChange(Constants.R_HEADS + headBranch, h.name(), commit.name());
        } catch (GitAPIException | IOException e) {
            throw new IllegalStateException("could not commit the resolution", e);
        } finally {
            dropPullBase(headRepo, baseRepo);
        }
    }

    /** The base's commits fetched into a fork for a resolution are not the fork's to keep a ref to. */
    private void dropPullBase(Repository headRepo, Repository baseRepo) {
        if (baseRepo.id().equals(headRepo.id())) {
            return;
        }
        try (org.eclipse.jgit.lib.Repository git = open(headRepo)) {
            if (git.exactRef("refs/atrium/pull-base") != null) {
                RefUpdate drop = git.updateRef("refs/atrium/pull-base");
                drop.setForceUpdate(true);
                drop.delete();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes the head branch after a merge, when it still points where it was merged from. */
    RefChange deleteBranch(Repository repo, String branch, String expected) {
        try (PushLock lock = registry.lockForPush(repo, LOCK_WAIT);
                org.eclipse.jgit.lib.Repository git = open(repo)) {
            Ref ref = git.exactRef(Constants.R_HEADS + branch);
            if (ref == null || !ref.getObjectId().name().equals(expected) || branch.equals(repo.defaultBranch())) {
                return null;
            }
            RefUpdate u = git.updateRef(ref.getName());
            u.setExpectedOldObjectId(ref.getObjectId());
            u.setForceUpdate(true);
            RefUpdate.Result r = u.delete();
            return r == RefUpdate.Result.FORCED
                    ? new RefChange(ref.getName(), expected, ObjectId.zeroId().name())
                    : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** 400 unless {@code path} is a file of the head commit with at least {@code line} lines. */
    void checkLine(Repository base, String headCommit, String path, int line) {
        String notAFile = "path " + path + " is not a file of the head commit";
        try (org.eclipse.jgit.lib.Repository repo = open(base);
                RevWalk walk = new RevWalk(repo);
                TreeWalk t = TreeWalk.forPath(
                        repo,
                        path,
                        walk.parseCommit(ObjectId.fromString(headCommit)).getTree())) {
            if (t == null || t.getFileMode(0).getObjectType() != Constants.OBJ_BLOB) {
                throw ApiException.badRequest(notAFile);
            }
            ObjectLoader loader = repo.open(t.getObjectId(0));
            if (loader.getSize() > 50L << 20) {
                throw ApiException.badRequest("path " + path + " is too large to comment on by line");
            }
            // streamed, and only as far as the line asked for: never the whole file in memory
            long lines = 0;
            boolean open = false;
            try (java.io.InputStream in = loader.openStream()) {
                byte[] buffer = new byte[8192];
                for (int n; lines < line && (n = in.read(buffer)) > 0; ) {
                    for (int i = 0; i < n; i++) {
                        if (buffer[i] == '\n') {
                            lines++;
                        }
                    }
                    open = buffer[n - 1] != '\n';
                }
            }
            if (open) {
                lines++; // a last line without its line break
            }
            if (line > lines) {
                throw ApiException.badRequest("path " + path + " has " + lines + " lines at the head, not " + line);
            }
        } catch (org.eclipse.jgit.errors.MissingObjectException
                | org.eclipse.jgit.errors.IncorrectObjectTypeException
                | IllegalArgumentException e) {
            throw ApiException.badRequest(notAFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
