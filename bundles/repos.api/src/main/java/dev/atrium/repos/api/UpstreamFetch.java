package dev.atrium.repos.api;

import dev.atrium.kernel.api.Caller;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Brings a repository's upstream (the remote it was imported from, or the repository it was forked from) into it, as
 * {@code POST /api/repos/:repoId/fetch} does: the upstream's branches into {@code refs/remotes/upstream/*} (those gone
 * upstream pruned), its new tags into {@code refs/tags/*} (a local tag never moves), under the repository's push
 * lock, through the egress guard and the import's limits. The app platform refreshes an app's remote source with it.
 *
 * @since 1.7
 */
@ProviderType
public interface UpstreamFetch {

    /** The ref prefix of the upstream's branches after a fetch. */
    String UPSTREAM_BRANCHES = "refs/remotes/upstream/";

    /**
     * Fetches the upstream of {@code repository} for {@code caller}, who must be able to write it; failures carry the
     * status the fetch route answers (409 without an upstream, 502 when it cannot be reached).
     */
    void fetchUpstream(Caller caller, Repository repository);
}
