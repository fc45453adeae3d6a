package dev.atrium.people.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.PublicProfiles;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * Turns repository events into activity items of the Principal who acted (the pusher, the one who starred, the
 * publisher of a release), on this component's own thread. Who may see an item is decided here, once: an item of a
 * private repository is {@code private} for good; otherwise the actor's {@code activity_visibility} ({@code self}
 * when it is {@code private}) at that moment.
 * A repository's later change of name or visibility, and its deletion, are applied to its earlier items; those made
 * while this bundle was stopped (a disabled feature, an update) are found by a sweep at activation.
 */
@Component(
        // at start, not at the first event: the sweep then runs when the bundle comes back
        immediate = true,
        property = {
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.PUSHED,
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.UPDATED,
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.DELETED,
            EventConstants.EVENT_TOPIC + "=" + ActivityRecorder.STARRED,
            EventConstants.EVENT_TOPIC + "=" + ActivityRecorder.UNSTARRED,
            EventConstants.EVENT_TOPIC + "=" + ActivityRecorder.RELEASE_PUBLISHED
        })
public class ActivityRecorder implements EventHandler {

    // the topics of stars and releases (the explore part of issue 40 publishes them)
    static final String STARRED = "atrium/repo/starred";
    static final String UNSTARRED = "atrium/repo/unstarred";
    static final String RELEASE_PUBLISHED = "atrium/repo/release_published";

    /** Commits of a push an item keeps (the event carries up to 100). */
    static final int COMMITS_KEPT = 5;

    private static final Logger LOG = LoggerFactory.getLogger(ActivityRecorder.class);

    private final ActivityStore store;
    private final PublicProfiles profiles;
    private final RepositoryRegistry repositories;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-activity"));

    @Activate
    public ActivityRecorder(
            @Reference ActivityStore store,
            @Reference PublicProfiles profiles,
            @Reference RepositoryRegistry repositories) {
        this.store = store;
        this.profiles = profiles;
        this.repositories = repositories;
        worker.execute(this::sweep);
    }

    /**
     * Looks again at every repository some item shows as public: one made private or deleted while no event reached
     * this component would otherwise stay counted in its actors' activity totals (the items themselves are filtered as
     * they are read).
     */
    private void sweep() {
        int corrected = 0;
        try {
            for (String repoId : store.repositoriesShownAsPublic()) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                Optional<Repository> repo = repositories.byId(repoId);
                if (repo.isEmpty()) {
                    store.repositoryDeleted(repoId);
                    corrected++;
                } else if (!repo.get().isPublic()) {
                    store.repositoryChanged(repoId, repo.get().name(), false);
                    corrected++;
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("the activity sweep stopped: {}", e.toString());
        }
        if (corrected > 0) {
            LOG.info("activity: {} repositories made private or deleted while this bundle was away", corrected);
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        worker.shutdown();
        if (!worker.awaitTermination(10, TimeUnit.SECONDS)) {
            worker.shutdownNow();
            LOG.warn("recording activity did not finish within 10 s of the bundle stopping");
        }
    }

    @Override
    public void handleEvent(Event event) {
        if (!(event.getProperty(RepositoryEvents.REPO_ID) instanceof String repoId)) {
            return;
        }
        try {
            worker.execute(() -> {
                try {
                    record(event, repoId);
                } catch (RuntimeException e) {
                    LOG.warn("recording activity of {} on {}: {}", event.getTopic(), repoId, e.toString());
                }
            });
        } catch (RejectedExecutionException stopping) {
            // the bundle stops: this item is not recorded
        }
    }

    private void record(Event event, String repoId) {
        String topic = event.getTopic();
        if (topic.equals(RepositoryEvents.DELETED)) {
            store.repositoryDeleted(repoId);
            return;
        }
        Optional<Repository> repository = repositories.byId(repoId);
        if (repository.isEmpty()) {
            store.repositoryDeleted(repoId);
            return;
        }
        Repository repo = repository.get();
        store.repositoryChanged(repoId, repo.name(), repo.isPublic());
        String actor = event.getProperty(RepositoryEvents.PRINCIPAL_ID) instanceof String p ? p : null;
        if (topic.equals(RepositoryEvents.UPDATED) || actor == null) {
            return;
        }
        if (topic.equals(UNSTARRED)) {
            store.removeStars(actor, repoId);
            return;
        }
        String audience = audience(actor, repo.isPublic() && !"private".equals(event.getProperty("visibility")));
        Map<String, Object> payload = new LinkedHashMap<>();
        String kind;
        switch (topic) {
            case RepositoryEvents.PUSHED -> {
                kind = "push";
                List<String> refs = new ArrayList<>();
                RepositoryEvents.refChanges(event.getProperty(RepositoryEvents.REFS))
                        .forEach(c -> refs.add(c.ref()));
                payload.put("refs", refs);
                List<Map<String, Object>> commits = new ArrayList<>();
                int count = 0;
                if (event.getProperty(RepositoryEvents.COMMITS) instanceof List<?> list) {
                    count = list.size();
                    for (Object o : list) {
                        if (commits.size() == COMMITS_KEPT) {
                            break;
                        }
                        if (o instanceof Map<?, ?> m) {
                            Map<String, Object> c = new LinkedHashMap<>();
                            c.put("sha", String.valueOf(m.get("sha")));
                            String message = String.valueOf(m.get("message"));
                            int eol = message.indexOf('\n');
                            c.put("message", eol < 0 ? message : message.substring(0, eol));
                            commits.add(c);
                        }
                    }
                }
                payload.put("commit_count", count);
                payload.put("commits", commits);
            }
            case STARRED -> kind = "star";
            case RELEASE_PUBLISHED -> {
                kind = "release";
                payload.put("tag", String.valueOf(event.getProperty("tag")));
                if (event.getProperty("release_id") instanceof String releaseId) {
                    payload.put("release_id", releaseId);
                }
                payload.put("prerelease", Boolean.TRUE.equals(event.getProperty("prerelease")));
            }
            default -> {
                return;
            }
        }
        store.add(actor, kind, repoId, repo.name(), audience, repo.isPublic(), payload);
    }

    /**
     * {@code private} (shown to nobody) for a private repository or an actor without a public profile; else the
     * actor's setting, its {@code private} written as {@code self} (shown to the actor only).
     */
    private String audience(String actorId, boolean repoPublic) {
        String setting = repoPublic
                ? profiles.byId(actorId)
                        .map(PublicProfiles.Profile::activityVisibility)
                        .orElse(null)
                : null;
        if (setting == null) {
            return "private";
        }
        return switch (setting) {
            case "public" -> "public";
            case "followers" -> "followers";
            default -> "self";
        };
    }
}
