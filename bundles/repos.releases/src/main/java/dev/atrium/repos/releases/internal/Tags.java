package dev.atrium.repos.releases.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;

/** The tags releases name, read and written in the repository's Git directory; changes are published as a push's. */
final class Tags {

    private static final java.time.Duration LOCK_WAIT = java.time.Duration.ofSeconds(10);

    private final RepositoryRegistry registry;

    Tags(RepositoryRegistry registry) {
        this.registry = registry;
    }

    /**
     * 400 unless {@code tag} can name a tag and be the path segment that addresses its release: no {@code /},
     * {@code %} or {@code ;} (the kernel refuses them encoded in a path), and not {@code latest} (a route).
     */
    String check(String tag) {
        String problem = registry.refNameProblem(Constants.R_TAGS + tag);
        if (problem != null) {
            throw ApiException.badRequest("tag_name is not a usable tag name: " + problem);
        }
        if (tag.indexOf('/') >= 0 || tag.indexOf('%') >= 0 || tag.indexOf(';') >= 0 || tag.equals("latest")) {
            throw ApiException.badRequest(
                    "a release's tag_name may not contain /, % or ; nor be latest: it is the release's path segment");
        }
        return tag;
    }

    /** The commit the tag names (an annotated tag peeled), or null when there is no such tag. */
    String commitOf(Repository repo, String tag) {
        try (org.eclipse.jgit.lib.Repository git = open(repo);
                RevWalk walk = new RevWalk(git)) {
            Ref ref = git.exactRef(Constants.R_TAGS + tag);
            return ref == null ? null : walk.parseCommit(ref.getObjectId()).name();
        } catch (org.eclipse.jgit.errors.IncorrectObjectTypeException notACommit) {
            throw ApiException.badRequest("tag " + tag + " does not name a commit");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The commit {@code target} (a branch, a tag or a commit id) names; 400 when it names none. */
    String resolve(Repository repo, String target) {
        try {
            return registry.resolveCommit(repo, target);
        } catch (ApiException e) {
            throw e.status() == 404
                    ? ApiException.badRequest("target_commitish " + target + " names no branch, tag or commit here")
                    : ApiException.badRequest("target_commitish: " + e.getMessage());
        }
    }

    /**
     * Makes the lightweight tag {@code tag} at the commit {@code target} names, as Gitea does for a release whose tag
     * does not exist, and publishes it (federation, workflows) like a pushed tag.
     *
     * @return the commit id
     */
    String create(Repository repo, String principalId, String tag, String target) {
        String commit = resolve(repo, target);
        RefChange change;
        // every ref writer takes it: a collection pruning meanwhile cannot take the commit from under the tag
        try (RepositoryRegistry.PushLock lock = registry.lockForPush(repo, LOCK_WAIT);
                org.eclipse.jgit.lib.Repository git = open(repo);
                RevWalk walk = new RevWalk(git)) {
            RevCommit at = walk.parseCommit(ObjectId.fromString(commit));
            RefUpdate u = git.updateRef(Constants.R_TAGS + tag);
            u.setExpectedOldObjectId(ObjectId.zeroId());
            u.setNewObjectId(at);
            u.setRefLogMessage("release: tag created at " + target, false);
            RefUpdate.Result r = u.update();
            if (r != RefUpdate.Result.NEW) {
                throw ApiException.conflict("tag " + tag + " could not be created (" + r + "); it may exist meanwhile");
            }
            change = new RefChange(Constants.R_TAGS + tag, ObjectId.zeroId().name(), at.name());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        registry.pushed(repo, principalId, List.of(change));
        return change.newId();
    }

    /** Deletes the tag, when there is one, and publishes it like a pushed deletion. */
    void delete(Repository repo, String principalId, String tag) {
        RefChange change;
        try (RepositoryRegistry.PushLock lock = registry.lockForPush(repo, LOCK_WAIT);
                org.eclipse.jgit.lib.Repository git = open(repo)) {
            Ref ref = git.exactRef(Constants.R_TAGS + tag);
            if (ref == null) {
                return;
            }
            RefUpdate u = git.updateRef(Constants.R_TAGS + tag);
            u.setExpectedOldObjectId(ref.getObjectId());
            u.setForceUpdate(true);
            RefUpdate.Result r = u.delete();
            if (r != RefUpdate.Result.FORCED && r != RefUpdate.Result.NO_CHANGE) {
                throw ApiException.conflict("tag " + tag + " changed while deleting it (" + r + ")");
            }
            change = new RefChange(
                    Constants.R_TAGS + tag,
                    ref.getObjectId().name(),
                    ObjectId.zeroId().name());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        registry.pushed(repo, principalId, List.of(change));
    }

    private org.eclipse.jgit.lib.Repository open(Repository repo) throws IOException {
        return new FileRepositoryBuilder()
                .setGitDir(registry.directory(repo).toFile())
                .setMustExist(true)
                .build();
    }
}
