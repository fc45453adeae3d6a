package dev.atrium.git.http.internal;

import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import java.util.Collection;
import java.util.function.Supplier;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.transport.PreReceiveHook;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;

/**
 * What a push may change, decided after its objects arrived and before any ref moves: nothing when an object is a
 * SHA-1 collision attack; no ref whose name git would refuse; never the default branch deleted; and, when the
 * repository's default branch takes merges of pull requests only, not that branch moved (made, while it does not
 * exist yet, it may be). The repository is read again here, under the push lock the receive holds.
 */
final class PushRules implements PreReceiveHook {

    private final RepositoryRegistry repositories;
    private final Repository repo;
    private final Supplier<String> attack;
    private final java.util.List<dev.atrium.repos.api.PushCheck> checks;

    PushRules(
            RepositoryRegistry repositories,
            Repository repo,
            Supplier<String> attack,
            java.util.List<dev.atrium.repos.api.PushCheck> checks) {
        this.repositories = repositories;
        this.repo = repo;
        this.attack = attack;
        this.checks = checks;
    }

    @Override
    public void onPreReceive(ReceivePack pack, Collection<ReceiveCommand> commands) {
        String attacked = attack.get();
        Repository now;
        boolean mergesOnly;
        try {
            now = repositories.byId(repo.id()).orElse(repo);
            mergesOnly = repositories.mergesOnly(now);
        } catch (RuntimeException e) {
            refuseAll(commands, "the repository's settings could not be read; try again");
            return;
        }
        if (attacked != null) {
            refuseAll(commands, attacked);
            return;
        }
        String defaultBranch = Constants.R_HEADS + now.defaultBranch();
        for (ReceiveCommand c : commands) {
            String problem = repositories.refNameProblem(c.getRefName());
            if (problem != null) {
                c.setResult(ReceiveCommand.Result.REJECTED_OTHER_REASON, problem);
            } else if (c.getType() == ReceiveCommand.Type.DELETE
                    && c.getRefName().equals(defaultBranch)) {
                c.setResult(ReceiveCommand.Result.REJECTED_NODELETE, "the default branch cannot be deleted");
            } else if (mergesOnly
                    && c.getType() != ReceiveCommand.Type.CREATE
                    && c.getRefName().equals(defaultBranch)) {
                c.setResult(
                        ReceiveCommand.Result.REJECTED_OTHER_REASON,
                        "the default branch takes merges of pull requests only");
            }
        }
        capabilityChecks(pack, now, commands);
    }

    /** The capabilities' checks ({@link dev.atrium.repos.api.PushCheck}) of each ref still to be made or moved. */
    private void capabilityChecks(ReceivePack pack, Repository now, Collection<ReceiveCommand> commands) {
        for (ReceiveCommand c : commands) {
            if (c.getResult() != ReceiveCommand.Result.NOT_ATTEMPTED || c.getType() == ReceiveCommand.Type.DELETE) {
                continue;
            }
            RepositoryRegistry.RefChange change = new RepositoryRegistry.RefChange(
                    c.getRefName(), c.getOldId().name(), c.getNewId().name());
            for (dev.atrium.repos.api.PushCheck check : checks) {
                String problem;
                try {
                    problem = check.problem(now, pack.getRepository(), change);
                } catch (RuntimeException e) {
                    problem = "a check of this push failed: " + e.getMessage();
                }
                if (problem != null) {
                    c.setResult(ReceiveCommand.Result.REJECTED_OTHER_REASON, problem);
                    break;
                }
            }
        }
    }

    private static void refuseAll(Collection<ReceiveCommand> commands, String why) {
        for (ReceiveCommand c : commands) {
            c.setResult(ReceiveCommand.Result.REJECTED_OTHER_REASON, why);
        }
    }
}
