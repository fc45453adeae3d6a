package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.eclipse.jgit.api.FetchCommand;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.LsRemoteCommand;
import org.eclipse.jgit.api.TransportConfigCallback;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.transport.FetchResult;
import org.eclipse.jgit.transport.RefSpec;
import org.eclipse.jgit.transport.TagOpt;

/**
 * Every fetch that brings history in from outside the server (a bundle upload, a remote import, a fork): the
 * source's branches and tags are listed first and every name must pass {@link GitNames#refNameProblem}; then
 * exactly those refs are fetched by explicit refspecs (no wildcard, no tag following, so no name the check did
 * not see can be written), with every received object run through {@link GitNames#newObjectChecker()}.
 */
final class CheckedFetch {

    /** How a fetch reaches its source: timeouts, credentials, the HTTP connection factory, a filter. */
    interface Setup {
        void apply(org.eclipse.jgit.api.TransportCommand<?, ?> command);
    }

    /**
     * Where a fetch writes the source's advertised ref ({@code refs/heads/…} or {@code refs/tags/…}): a refspec, or
     * null to leave it out.
     */
    interface Mapping {
        RefSpec spec(Ref advertised);

        /** The same names, forced ({@code +}) when {@code force}. */
        static Mapping same(boolean force) {
            return ref -> new RefSpec((force ? "+" : "") + ref.getName() + ":" + ref.getName());
        }
    }

    private CheckedFetch() {}

    /**
     * Fetches {@code refs/heads/*} and {@code refs/tags/*} of {@code remote} into the same names of {@code git}.
     *
     * @param force whether a branch may be rewritten (else a non-fast-forward is a rejected update)
     * @param configure applied to the transport of both the listing and the fetch
     * @return the fetch's result, or null when the source has no branches or tags
     * @throws ApiException 400 naming the first ref whose name is not acceptable; nothing was fetched then
     */
    static FetchResult fetch(
            Git git,
            String remote,
            boolean force,
            Setup setup,
            TransportConfigCallback configure,
            org.eclipse.jgit.lib.ProgressMonitor monitor)
            throws GitAPIException {
        return fetch(git, remote, force, setup, configure, monitor, false);
    }

    /**
     * As {@link #fetch(Git, String, boolean, Setup, TransportConfigCallback, org.eclipse.jgit.lib.ProgressMonitor)};
     * {@code partial}: a blobless fetch into a repository nobody else uses yet. JGit insists on a complete object
     * graph whenever a fetch has an object checker, so the commits, trees and tags of a partial fetch are checked
     * right after it instead (the caller deletes the new repository when that fails).
     */
    static FetchResult fetch(
            Git git,
            String remote,
            boolean force,
            Setup setup,
            TransportConfigCallback configure,
            org.eclipse.jgit.lib.ProgressMonitor monitor,
            boolean partial)
            throws GitAPIException {
        return fetch(git, remote, Mapping.same(force), setup, configure, monitor, partial);
    }

    /** As the others, each advertised branch and tag written where {@code mapping} says. */
    static FetchResult fetch(
            Git git,
            String remote,
            Mapping mapping,
            Setup setup,
            TransportConfigCallback configure,
            org.eclipse.jgit.lib.ProgressMonitor monitor,
            boolean partial)
            throws GitAPIException {
        LsRemoteCommand list = git.lsRemote().setRemote(remote).setHeads(false).setTags(false);
        setup.apply(list);
        list.setTransportConfigCallback(configure);
        Collection<Ref> advertised = list.call();
        List<RefSpec> specs = new ArrayList<>();
        for (Ref r : advertised) {
            String name = r.getName();
            if (!name.startsWith(Constants.R_HEADS) && !name.startsWith(Constants.R_TAGS)) {
                continue; // HEAD, pull requests, notes: not imported
            }
            String problem = GitNames.refNameProblem(name);
            if (problem != null) {
                throw ApiException.badRequest(
                        "the source has a ref whose name is not acceptable, so nothing was imported: " + problem);
            }
            RefSpec spec = mapping.spec(r);
            if (spec != null) {
                specs.add(spec);
            }
        }
        if (specs.isEmpty()) {
            return null;
        }
        FetchCommand fetch = git.fetch()
                .setRemote(remote)
                .setRefSpecs(specs)
                .setTagOpt(TagOpt.NO_TAGS)
                .setRemoveDeletedRefs(false);
        setup.apply(fetch);
        if (monitor != null) {
            fetch.setProgressMonitor(monitor);
        }
        fetch.setTransportConfigCallback(t -> {
            if (configure != null) {
                configure.configure(t);
            }
            if (!partial) {
                t.setObjectChecker(GitNames.newObjectChecker());
            }
        });
        FetchResult result = fetch.call();
        if (partial) {
            List<org.eclipse.jgit.lib.ObjectId> tips = new ArrayList<>();
            for (Ref r : result.getAdvertisedRefs()) {
                if (r.getObjectId() != null
                        && (r.getName().startsWith(Constants.R_HEADS)
                                || r.getName().startsWith(Constants.R_TAGS))) {
                    tips.add(r.getObjectId());
                }
            }
            checkReachable(git.getRepository(), tips);
        }
        return result;
    }

    /** Runs every commit, tree and tag reachable from {@code tips} through the checker; blobs may be absent. */
    static void checkReachable(org.eclipse.jgit.lib.Repository repo, List<org.eclipse.jgit.lib.ObjectId> tips) {
        org.eclipse.jgit.lib.ObjectChecker checker = GitNames.newObjectChecker();
        try (org.eclipse.jgit.revwalk.ObjectWalk walk = new org.eclipse.jgit.revwalk.ObjectWalk(repo)) {
            org.eclipse.jgit.lib.ObjectReader reader = walk.getObjectReader();
            for (org.eclipse.jgit.lib.ObjectId tip : tips) {
                org.eclipse.jgit.revwalk.RevObject o = walk.parseAny(tip);
                while (o instanceof org.eclipse.jgit.revwalk.RevTag tag) {
                    checker.check(
                            tag,
                            Constants.OBJ_TAG,
                            reader.open(tag, Constants.OBJ_TAG).getCachedBytes());
                    o = walk.parseAny(tag.getObject());
                }
                walk.markStart(o);
            }
            for (org.eclipse.jgit.revwalk.RevCommit c; (c = walk.next()) != null; ) {
                checker.check(
                        c,
                        Constants.OBJ_COMMIT,
                        reader.open(c, Constants.OBJ_COMMIT).getCachedBytes());
            }
            for (org.eclipse.jgit.revwalk.RevObject o; (o = walk.nextObject()) != null; ) {
                if (o.getType() == Constants.OBJ_TREE) {
                    checker.check(
                            o,
                            Constants.OBJ_TREE,
                            reader.open(o, Constants.OBJ_TREE).getCachedBytes());
                }
            }
        } catch (org.eclipse.jgit.errors.CorruptObjectException e) {
            throw ApiException.badRequest(
                    "the source holds an object git fsck refuses, so nothing was imported: " + e.getMessage());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("checking the fetched objects: " + e.getMessage(), e);
        }
    }

    /**
     * The messages of an exception and its causes, without the server's own paths (a temporary file, the data
     * directory) that JGit puts into them.
     */
    static String describe(Throwable e, String... hidden) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage();
            if (m == null || m.isBlank() || out.indexOf(m) >= 0) {
                continue;
            }
            if (out.length() > 0) {
                out.append(": ");
            }
            out.append(m);
        }
        String s = out.length() == 0 ? e.getClass().getSimpleName() : out.toString();
        for (String h : hidden) {
            if (h != null && !h.isEmpty()) {
                s = s.replace(h, "<source>");
            }
        }
        return s;
    }
}
