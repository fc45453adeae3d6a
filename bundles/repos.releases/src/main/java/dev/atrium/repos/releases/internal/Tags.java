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

    private final RepositoryRegistry registry;

    Tags(RepositoryRegistry registry) {
        this.registry = registry;
    }

    /** 400 unless {@code tag} can name a tag. */
    String check(String tag) {
        String problem = registry.refNameProblem(Constants.R_TAGS + tag);
        if (problem != null) {
            throw ApiException.badRequest("tag_name is not a usable tag name: " + problem);
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
        try (org.eclipse.jgit.lib.Repository git = open(repo);
                RevWalk walk = new RevWalk(git)) {
            return commit(git, walk, target).name();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Makes the lightweight tag {@code tag} at the commit {@code target} names, as Gitea does for a release whose tag
     * does not exist, and publishes it (federation, workflows) like a pushed tag.
     *
     * @return the commit id
     */
    String create(Repository repo, String principalId, String tag, String target) {
        RefChange change;
        try (org.eclipse.jgit.lib.Repository git = open(repo);
                RevWalk walk = new RevWalk(git)) {
            RevCommit at = commit(git, walk, target);
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
        try (org.eclipse.jgit.lib.Repository git = open(repo)) {
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

    private static RevCommit commit(org.eclipse.jgit.lib.Repository git, RevWalk walk, String target)
            throws IOException {
        ObjectId id = null;
        try {
            if (target.length() == 40 && target.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                id = ObjectId.fromString(target);
            } else {
                for (String prefix : new String[] {Constants.R_HEADS, Constants.R_TAGS}) {
                    Ref ref = git.exactRef(prefix + target);
                    if (ref != null) {
                        id = ref.getObjectId();
                        break;
                    }
                }
            }
            if (id == null) {
                throw ApiException.badRequest("target_commitish " + target + " is no branch, tag or commit id here");
            }
            return walk.parseCommit(id);
        } catch (org.eclipse.jgit.errors.MissingObjectException
                | org.eclipse.jgit.errors.IncorrectObjectTypeException e) {
            throw ApiException.badRequest("target_commitish " + target + " names no commit here");
        }
    }

    private org.eclipse.jgit.lib.Repository open(Repository repo) throws IOException {
        return new FileRepositoryBuilder()
                .setGitDir(registry.directory(repo).toFile())
                .setMustExist(true)
                .build();
    }
}
