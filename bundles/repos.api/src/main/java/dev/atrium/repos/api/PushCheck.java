package dev.atrium.repos.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A capability's say on a push over Git, asked after its objects arrived and before any ref moves (a receive's
 * pre-receive): Actions refuses a workflow file that does not parse, with its line. Every registered check is asked
 * for every ref the push creates or moves; a problem refuses that ref (the whole push when the client asked for an
 * atomic one), its message shown to the pusher by their git client.
 *
 * @since 1.6
 */
@ConsumerType
public interface PushCheck {

    /**
     * Why {@code change} must not be made, or null.
     *
     * @param db the repository as the receive holds it, the pushed objects readable in it; not to be closed
     */
    String problem(Repository repository, org.eclipse.jgit.lib.Repository db, RepositoryRegistry.RefChange change);
}
