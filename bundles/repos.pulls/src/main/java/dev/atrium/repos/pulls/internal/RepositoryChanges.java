package dev.atrium.repos.pulls.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes and deletions of repositories, heard on EventAdmin and handled on this component's thread: a push to a
 * branch that is the head or base of open pull requests brings them up to date (new commits, comments outdated, the
 * merge checked again); a deleted repository takes its pull requests. At start, pull requests of repositories deleted
 * while this bundle was stopped go too.
 */
@Component(
        property = {
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.PUSHED,
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.DELETED
        })
public class RepositoryChanges implements EventHandler {

    private static final Logger LOG = LoggerFactory.getLogger(RepositoryChanges.class);

    private final RepositoryRegistry repositories;
    private final PullStore store;
    private final Pulls pulls;
    private final ExecutorService worker =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-pull-updates"));

    @Activate
    public RepositoryChanges(
            @Reference RepositoryRegistry repositories, @Reference PullStore store, @Reference Pulls pulls) {
        this.repositories = repositories;
        this.store = store;
        this.pulls = pulls;
        worker.execute(this::sweep);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        worker.shutdownNow();
        if (!worker.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.warn("bringing pull requests up to date did not stop within 10 s of the bundle stopping");
        }
    }

    @Override
    public void handleEvent(Event event) {
        if (!(event.getProperty(RepositoryEvents.REPO_ID) instanceof String repoId)) {
            return;
        }
        try {
            if (event.getTopic().equals(RepositoryEvents.DELETED)) {
                worker.execute(() -> store.forgetRepository(repoId));
            } else {
                for (var change : RepositoryEvents.refChanges(event.getProperty(RepositoryEvents.REFS))) {
                    if (change.ref().startsWith("refs/heads/")) {
                        String branch = change.ref().substring("refs/heads/".length());
                        worker.execute(() -> pulls.pushed(repoId, branch));
                    }
                }
            }
        } catch (RejectedExecutionException stopping) {
            // a read brings pull requests up to date anyway
        }
    }

    private void sweep() {
        try {
            for (String repoId : store.repositories()) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                if (repositories.byId(repoId).isEmpty()) {
                    store.forgetRepository(repoId);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("the sweep for pull requests of deleted repositories failed; the next start tries again", e);
        }
    }
}
