package dev.atrium.repos.api;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/** The repositories bundle's service for bundles that serve or react to repositories. */
@ProviderType
public interface RepositoryRegistry {

    /** The repository named {@code name} in workspace {@code spaceId} (a trailing {@code .git} is ignored). */
    Optional<Repository> find(String spaceId, String name);

    /**
     * Every repository of workspace {@code spaceId}, oldest first (the caller filters by visibility: a catalog publishes
     * only public ones).
     *
     * @since 1.3
     */
    List<Repository> list(String spaceId);

    /**
     * A new repository in workspace {@code spaceId}, fetched from a remote Git URL over smart HTTP. Every connection,
     * and every redirect, goes through the kernel's egress guard; the import's size and time limits are the operator's.
     * When the fetch fails the new repository is removed again.
     *
     * @param token a bearer token for the remote, or null
     * @throws dev.atrium.kernel.api.ApiException 400 when the URL is refused or not a Git repository, 409 when the name
     *         is taken, 502 when the remote fails
     * @since 1.4
     */
    ImportedRepository importRemote(
            String spaceId, String name, String description, String visibility, java.net.URI remote, String token);

    /**
     * A repository made by {@link #importRemote}.
     *
     * @param partial   whether the remote's answer was cut short by a limit (what arrived is kept)
     * @param sourceUrl the URL the import read from after redirects
     * @since 1.4
     */
    record ImportedRepository(Repository repository, boolean partial, String sourceUrl) {}

    /**
     * The repository with id {@code id}, whoever owns it: for bundles that keep data of repositories and tidy it up
     * (never to answer a caller: use {@link #readable}).
     *
     * @since 1.5
     */
    Optional<Repository> byId(String id);

    /**
     * The repository {@code repoId} as {@code caller} may read it, decided as for every {@code /api/repos/:repoId}
     * route: its owner (proved by the kernel's owner scope) reads and writes it; anyone signed in reads a public one;
     * someone else's private repository is the same 404 as a missing one.
     *
     * @throws dev.atrium.kernel.api.ApiException 404 {@code NOT_FOUND} when the caller may not read it
     * @since 1.5
     */
    Access readable(dev.atrium.kernel.api.Caller caller, String repoId);

    /**
     * The repository {@code repoId} when {@code caller} owns it.
     *
     * @throws dev.atrium.kernel.api.ApiException 404 as {@link #readable}; 403 {@code FORBIDDEN} when the caller only
     *         reads it (a public repository of someone else)
     * @since 1.5
     */
    default Repository writable(dev.atrium.kernel.api.Caller caller, String repoId) {
        Access a = readable(caller, repoId);
        if (!a.owned()) {
            throw dev.atrium.kernel.api.ApiException.forbidden("only the owner of this repository may change it");
        }
        return a.repository();
    }

    /**
     * A repository a caller may read.
     *
     * @param owned whether the caller owns it (and may change it); false for someone else's public repository
     * @since 1.5
     */
    record Access(Repository repository, boolean owned) {}

    /**
     * The commit {@code revision} names in the repository, read by the rules of the repositories' own routes: a branch,
     * a tag (peeled), {@code HEAD}, or a full or abbreviated id of a commit reachable from one of its refs.
     *
     * @return the commit's id
     * @throws dev.atrium.kernel.api.ApiException 400 when {@code revision} is not one git would take, 404 when it names
     *         no commit here
     * @since 1.5
     */
    String resolveCommit(Repository repository, String revision);

    /**
     * Whether the repository's default branch takes merges of pull requests only ({@code merges_only}): a push or a
     * commit to it is refused; a pull request's merge moves it.
     *
     * @since 1.5
     */
    boolean mergesOnly(Repository repository);

    /**
     * A public repository as anyone may see it, with its owner's public name; empty when it is missing, private, or its
     * owner is not vouched for by the kernel (suspended).
     *
     * @since 1.8
     */
    Optional<PublicRepository> publicRepository(String repoId);

    /**
     * The public repository {@code name} of the owner named {@code owner} (a username, standing for that user's default
     * workspace, or a workspace slug, as in {@code /git/:owner/:repo.git}); empty as for {@link #publicRepository(String)}.
     *
     * @since 1.8
     */
    Optional<PublicRepository> publicRepository(String owner, String name);

    /**
     * A public repository with what explore shows of its owner.
     *
     * @param ownerUsername the owner's username, or null when they chose none
     * @param ownerPath     how paths name the owner: the username for a default workspace, the workspace slug otherwise
     * @param fullName      {@code ownerPath/name}
     * @param stars         how many Principals starred it
     * @since 1.8
     */
    record PublicRepository(
            Repository repository, String ownerUsername, String ownerPath, String fullName, int stars) {}

    /** The bare Git directory of a repository. */
    Path directory(Repository repository);

    /**
     * Takes the repository's push lock, shared by every server instance on the database: one push at a time
     * per repository.
     *
     * @param wait how long to wait for a push in progress
     * @return the lock; closing it releases it
     * @throws dev.atrium.kernel.api.ApiException 409 {@code CONFLICT} when another push still holds it after {@code wait}
     */
    PushLock lockForPush(Repository repository, Duration wait);

    /** Publishes {@link RepositoryEvents#PUSHED} and branch/tag events for ref updates a push made. */
    void pushed(Repository repository, String pusherPrincipalId, List<RefChange> changes);

    /**
     * What is wrong with a full ref name ({@code refs/heads/main}) by the rules every way into a repository
     * shares ({@code git check-ref-format}, no lone surrogates), or null when it may be written.
     */
    String refNameProblem(String refName);

    /**
     * A new checker for objects that enter a repository (git fsck --strict rules, the HFS and NTFS forms of
     * {@code .git} included); one per transfer, it is not thread-safe.
     */
    org.eclipse.jgit.lib.ObjectChecker newObjectChecker();

    /**
     * Opens a repository's Git directory to receive a push. Objects that arrive in a pack are hashed with the JDK's
     * SHA-1 while another thread runs SHA-1 collision detection (git's sha1dc, as JGit implements it) over the same
     * bytes, so detection costs a push little wall time. Before any ref is updated, {@link #awaitCollisionCheck}
     * must pass. Where the operator turned detection off ({@code ATRIUM_GIT_SHA1=fast}) this is a plain open.
     *
     * @return the repository; the caller closes it
     * @since 1.2
     */
    org.eclipse.jgit.lib.Repository openForPush(Repository repository) throws java.io.IOException;

    /**
     * Waits until every object that a repository opened by {@link #openForPush} has received was checked for a
     * SHA-1 collision attack; returns at once for a repository opened otherwise.
     *
     * @throws org.eclipse.jgit.errors.CorruptObjectException naming the object when one is an attack (or its
     *                                                        check could not finish): refuse the push
     * @since 1.2
     */
    void awaitCollisionCheck(org.eclipse.jgit.lib.Repository opened) throws java.io.IOException;

    /** The held push lock of a repository. */
    interface PushLock extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * One ref a push changed.
     *
     * @param oldId the previous object id, or 40 zeros when the ref was created
     * @param newId the new object id, or 40 zeros when the ref was deleted
     */
    record RefChange(String ref, String oldId, String newId) {}
}
