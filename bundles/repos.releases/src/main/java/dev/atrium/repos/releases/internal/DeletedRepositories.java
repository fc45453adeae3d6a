package dev.atrium.repos.releases.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * A deleted repository's releases go with it: their rows, and the assets' bytes in the BlobStore. The event says so
 * while this bundle runs; a sweep at activation finds repositories deleted while it was stopped. Both run on this
 * component's one thread.
 */
@Component(property = EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.DELETED)
public class DeletedRepositories implements EventHandler {

    private static final Logger LOG = LoggerFactory.getLogger(DeletedRepositories.class);

    private final RepositoryRegistry repositories;
    private final ReleaseStore store;
    private final ReleaseAssets assets;
    private final ExecutorService sweep =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-releases-sweep"));

    @Activate
    public DeletedRepositories(
            @Reference RepositoryRegistry repositories,
            @Reference ReleaseStore store,
            @Reference ReleaseAssets assets) {
        this.repositories = repositories;
        this.store = store;
        this.assets = assets;
        sweep.execute(this::sweep);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        sweep.shutdownNow();
        sweep.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Override
    public void handleEvent(Event event) {
        if (event.getProperty(RepositoryEvents.REPO_ID) instanceof String repoId) {
            // off EventAdmin's thread: deleting many blobs (on S3) takes longer than it lets a handler take
            try {
                sweep.execute(() -> forget(repoId));
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                // the next start's sweep finds it
            }
        }
    }

    private void sweep() {
        try {
            for (String repoId : store.repositories()) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                if (repositories.byId(repoId).isEmpty()) {
                    forget(repoId);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("the sweep for releases of deleted repositories failed; the next start tries again", e);
        }
    }

    private void forget(String repoId) {
        try {
            if (assets.forgetRepository(repoId) > 0) {
                LOG.info("removed the releases of deleted repository {}", repoId);
            }
        } catch (RuntimeException e) {
            LOG.warn("could not remove the releases of deleted repository {}", repoId, e);
        }
    }
}
