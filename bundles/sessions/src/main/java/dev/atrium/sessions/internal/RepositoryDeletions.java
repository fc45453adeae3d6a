package dev.atrium.sessions.internal;

import dev.atrium.repos.api.RepositoryEvents;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;

/** A deleted repository's open sessions end with it (discarded; the reaper removes their work trees). */
@Component(property = EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.DELETED)
public class RepositoryDeletions implements EventHandler {

    private final SyncSessions sessions;

    @Activate
    public RepositoryDeletions(@Reference SyncSessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public void handleEvent(Event event) {
        if (event.getProperty(RepositoryEvents.REPO_ID) instanceof String repoId) {
            sessions.repositoryDeleted(repoId);
        }
    }
}
