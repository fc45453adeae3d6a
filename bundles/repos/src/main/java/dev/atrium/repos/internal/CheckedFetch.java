package dev.atrium.repos.internal;

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

import dev.atrium.kernel.api.ApiException;

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

    private CheckedFetch() {
    }

    /**
     * Fetches {@code refs/heads/*} and {@code refs/tags/*} of {@code remote} into the same names of {@code git}.
     *
     * @param force whether a branch may be rewritten (else a non-fast-forward is a rejected update)
     * @param configure applied to the transport of both the listing and the fetch
     * @return the fetch's result, or null when the source has no branches or tags
     * @throws ApiException 400 naming the first ref whose name is not acceptable; nothing was fetched then
     */
    static FetchResult fetch(Git git, String remote, boolean force, Setup setup, TransportConfigCallback configure,
            org.eclipse.jgit.lib.ProgressMonitor monitor) throws GitAPIException {
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
                throw ApiException.badRequest("the source has a ref whose name is not acceptable, so nothing was imported: " + problem);
            }
            specs.add(new RefSpec((force ? "+" : "") + name + ":" + name));
        }
        if (specs.isEmpty()) {
            return null;
        }
        FetchCommand fetch = git.fetch().setRemote(remote).setRefSpecs(specs).setTagOpt(TagOpt.NO_TAGS).setRemoveDeletedRefs(false);
        setup.apply(fetch);
        if (monitor != null) {
            fetch.setProgressMonitor(monitor);
        }
        fetch.setTransportConfigCallback(t -> {
            if (configure != null) {
                configure.configure(t);
            }
            t.setObjectChecker(GitNames.newObjectChecker());
        });
        return fetch.call();
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
