package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.actions.internal.ActionStore.WorkflowFile;
import dev.atrium.actions.internal.Runs.Trigger;
import dev.atrium.actions.internal.workflow.Workflow;
import dev.atrium.actions.internal.workflow.WorkflowException;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jgit.diff.DiffEntry;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;
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
 * What starts runs: pushes (heard on EventAdmin, handled on this component's thread), pull requests opened, reopened
 * or moved ({@code pull_request}), dispatches, and schedules (checked every {@link #SCHEDULE_SECONDS} seconds; one
 * instance takes each due time). A deleted repository takes its Actions data with it.
 */
@Component(
        service = {RunTriggers.class, EventHandler.class},
        property = {
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.PUSHED,
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.DELETED,
            EventConstants.EVENT_TOPIC + "=atrium/pull/opened",
            EventConstants.EVENT_TOPIC + "=atrium/pull/reopened",
            EventConstants.EVENT_TOPIC + "=atrium/pull/synchronized"
        })
public class RunTriggers implements EventHandler {

    private static final Logger LOG = LoggerFactory.getLogger(RunTriggers.class);
    static final int SCHEDULE_SECONDS = 30;
    private static final int MAX_CHANGED_PATHS = 3000;

    private final RepositoryRegistry repositories;
    private final Runs runs;
    private final WorkflowFiles files;
    private final ActionStore store;
    private final Secrets secrets;
    private final BlobStore blobs;
    private final SpaceDirectory spaces;
    private final ExecutorService worker =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-actions-triggers"));
    private final ScheduledExecutorService clock =
            Executors.newSingleThreadScheduledExecutor(NamedThreads.factory("atrium-actions-schedule"));

    @Activate
    public RunTriggers(
            @Reference RepositoryRegistry repositories,
            @Reference Runs runs,
            @Reference WorkflowFiles files,
            @Reference ActionStore store,
            @Reference Secrets secrets,
            @Reference BlobStore blobs,
            @Reference SpaceDirectory spaces) {
        this.repositories = repositories;
        this.runs = runs;
        this.files = files;
        this.store = store;
        this.secrets = secrets;
        this.blobs = blobs;
        this.spaces = spaces;
        worker.execute(this::sweepDeleted);
        var unused =
                clock.scheduleWithFixedDelay(this::schedules, SCHEDULE_SECONDS, SCHEDULE_SECONDS, TimeUnit.SECONDS);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        clock.shutdownNow();
        worker.shutdownNow();
        if (!worker.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.warn("starting runs of pushes did not stop within 10 s of Actions stopping");
        }
        clock.awaitTermination(5, TimeUnit.SECONDS);
    }

    @Override
    public void handleEvent(Event event) {
        if (!(event.getProperty(RepositoryEvents.REPO_ID) instanceof String repoId)) {
            return;
        }
        try {
            if (event.getTopic().equals(RepositoryEvents.DELETED)) {
                worker.execute(() -> forget(repoId));
            } else if (event.getTopic().equals(RepositoryEvents.PUSHED)) {
                String actor = String.valueOf(event.getProperty(RepositoryEvents.PRINCIPAL_ID));
                List<RefChange> changes = RepositoryEvents.refChanges(event.getProperty(RepositoryEvents.REFS));
                worker.execute(() -> pushed(repoId, actor, changes));
            } else {
                worker.execute(() -> pullRequest(event, repoId));
            }
        } catch (RejectedExecutionException stopping) {
            // Actions is stopping: this event starts nothing
        }
    }

    private void pushed(String repoId, String actor, List<RefChange> changes) {
        Optional<Repository> found = repositories.byId(repoId);
        if (found.isEmpty()) {
            return;
        }
        Repository repo = found.get();
        for (RefChange c : changes) {
            String ref = c.ref();
            String newId = c.newId();
            if (ObjectId.zeroId().name().equals(newId)
                    || !(ref.startsWith("refs/heads/") || ref.startsWith("refs/tags/"))) {
                continue;
            }
            try {
                if (ref.equals("refs/heads/" + repo.defaultBranch())) {
                    files.sync(repo, null);
                }
                List<String> paths = changedPaths(repo, c.oldId(), newId);
                runs.trigger(
                        repo,
                        new Trigger("push", ref, newId, actor, false, Map.of()),
                        wf -> wf.on().onPush(ref, paths));
            } catch (RuntimeException e) {
                LOG.warn("the runs of a push to {} of {} were not started", ref, repoId, e);
            }
        }
    }

    private void pullRequest(Event event, String repoId) {
        String topic = event.getTopic();
        String action = topic.endsWith("synchronized") ? "synchronize" : topic.substring(topic.lastIndexOf('/') + 1);
        Object number = event.getProperty("number");
        Object head = event.getProperty("head_commit");
        Object base = event.getProperty("base_commit");
        Object baseBranch = event.getProperty("base_branch");
        Object headRepo = event.getProperty("head_repo_id");
        Object actor = event.getProperty("principal_id");
        Optional<Repository> found = repositories.byId(repoId);
        if (found.isEmpty() || !(head instanceof String headCommit) || !(baseBranch instanceof String branch)) {
            return;
        }
        Repository repo = found.get();
        try {
            List<String> paths = base instanceof String b ? changedPaths(repo, b, headCommit) : null;
            boolean fromFork = headRepo instanceof String h && !h.equals(repoId);
            runs.trigger(
                    repo,
                    new Trigger(
                            "pull_request",
                            "refs/pull/" + number + "/head",
                            headCommit,
                            actor instanceof String a ? a : ownerOf(repo),
                            fromFork,
                            Map.of()),
                    wf -> wf.on().onPullRequest(action, branch, paths));
        } catch (RuntimeException e) {
            LOG.warn("the runs of pull request {} of {} were not started", number, repoId, e);
        }
    }

    /** A dispatch: the workflow as the ref has it, which must take {@code workflow_dispatch}. */
    Run dispatch(Caller caller, Repository repo, String path, String ref, Map<String, String> inputs) {
        return dispatch(caller, repo, path, ref, null, inputs);
    }

    /**
     * A dispatch on {@code ref} at {@code at} (a commit of the repository, which the ref may have moved past since: a
     * deployment builds the commit it deploys), or where the ref points when {@code at} is null. The workflow is the
     * commit's, as for a push.
     */
    Run dispatch(Caller caller, Repository repo, String path, String ref, String at, Map<String, String> inputs) {
        String tip = repositories.resolveCommit(repo, ref); // the ref must exist, even when the run is not at its tip
        String commit = at == null ? tip : commitOf(repo, at);
        String text = files.at(repo, commit).get(path);
        if (text == null) {
            throw ApiException.notFound("the workflow " + path + " is not at " + ref);
        }
        Workflow wf;
        try {
            wf = files.parse(path, text);
        } catch (WorkflowException e) {
            throw new ApiException(422, "INVALID_WORKFLOW", e.getMessage());
        }
        if (!wf.on().dispatchable()) {
            throw new ApiException(
                    422, "NOT_DISPATCHABLE", "the workflow " + path + " has no workflow_dispatch trigger");
        }
        Map<String, String> resolved;
        try {
            resolved = wf.on().resolveInputs(inputs);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
        String fullRef = ref.startsWith("refs/") ? ref : refOf(repo, ref);
        Run run = runs.create(
                repo,
                path,
                text,
                wf,
                new Trigger("workflow_dispatch", fullRef, commit, caller.principalId(), false, resolved));
        runs.wake();
        return run;
    }

    private String commitOf(Repository repo, String commit) {
        try {
            return repositories.resolveCommit(repo, commit);
        } catch (ApiException e) {
            if (e.status() != 404) {
                throw e;
            }
            throw ApiException.notFound(
                    "the commit " + commit + " is not in the repository, or no branch or tag" + " reaches it");
        }
    }

    private String refOf(Repository repo, String ref) {
        try (org.eclipse.jgit.lib.Repository db = files.open(repo)) {
            if (db.exactRef("refs/heads/" + ref) != null) {
                return "refs/heads/" + ref;
            }
            if (db.exactRef("refs/tags/" + ref) != null) {
                return "refs/tags/" + ref;
            }
            return ref;
        } catch (IOException e) {
            return ref;
        }
    }

    // ------------------------------------------------------------------------------------------- schedules

    private void schedules() {
        try {
            Instant now = Instant.now();
            for (WorkflowFile w : store.scheduledWorkflows()) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                scheduled(w, now);
            }
        } catch (RuntimeException e) {
            LOG.warn("checking the workflows' schedules failed; the next check tries again", e);
        }
    }

    private void scheduled(WorkflowFile w, Instant now) {
        Workflow wf;
        try {
            wf = files.parse(w.path(), w.content());
        } catch (WorkflowException e) {
            return;
        }
        if (wf.on().schedules().isEmpty() || w.commitId() == null) {
            return;
        }
        Instant since = w.scheduledUntil() != null ? w.scheduledUntil() : w.updatedAt();
        ZonedDateTime from = since.atZone(ZoneOffset.UTC);
        boolean due = wf.on().schedules().stream()
                .map(s -> s.nextAfter(from))
                .anyMatch(next -> next.isPresent() && !next.get().toInstant().isAfter(now));
        Sql sql = store.sql();
        int taken = sql.update(
                "UPDATE action_workflows SET scheduled_until = ? WHERE repo_id = ? AND path = ?"
                        + " AND scheduled_until IS NOT DISTINCT FROM ?",
                java.sql.Timestamp.from(now),
                w.repoId(),
                w.path(),
                w.scheduledUntil() == null ? null : java.sql.Timestamp.from(w.scheduledUntil()));
        if (!due || taken == 0) {
            return;
        }
        repositories.byId(w.repoId()).ifPresent(repo -> {
            runs.create(
                    repo,
                    w.path(),
                    w.content(),
                    wf,
                    new Trigger(
                            "schedule",
                            "refs/heads/" + repo.defaultBranch(),
                            w.commitId(),
                            ownerOf(repo),
                            false,
                            Map.of()));
            runs.wake();
        });
    }

    private String ownerOf(Repository repo) {
        return spaces.byId(repo.spaceId()).map(SpaceRef::ownerPrincipalId).orElse("");
    }

    // ------------------------------------------------------------------------------------------- helpers

    /** The paths a push changed, or null when that is not known (a new branch, or too many). */
    private List<String> changedPaths(Repository repo, String oldId, String newId) {
        if (ObjectId.zeroId().name().equals(oldId)) {
            return null;
        }
        try (org.eclipse.jgit.lib.Repository db = files.open(repo);
                RevWalk walk = new RevWalk(db);
                TreeWalk tw = new TreeWalk(db)) {
            tw.setRecursive(true);
            tw.addTree(walk.parseCommit(ObjectId.fromString(oldId)).getTree());
            tw.addTree(walk.parseCommit(ObjectId.fromString(newId)).getTree());
            List<String> out = new ArrayList<>();
            for (DiffEntry d : DiffEntry.scan(tw)) {
                if (d.getChangeType() != DiffEntry.ChangeType.ADD) {
                    out.add(d.getOldPath());
                }
                if (d.getChangeType() != DiffEntry.ChangeType.DELETE
                        && !d.getNewPath().equals(d.getOldPath())) {
                    out.add(d.getNewPath());
                }
                if (out.size() > MAX_CHANGED_PATHS) {
                    return null;
                }
            }
            return out;
        } catch (IOException | IllegalArgumentException e) {
            return null; // a forced push from an unrelated history: paths filters pass
        }
    }

    private void forget(String repoId) {
        Sql sql = store.sql();
        sql.update("DELETE FROM action_runs WHERE repo_id = ?", repoId);
        sql.update("DELETE FROM action_workflows WHERE repo_id = ?", repoId);
        sql.update("DELETE FROM action_caches WHERE repo_id = ?", repoId);
        secrets.forgetRepository(repoId);
        try (var blobsOf = blobs.list(Artifacts.namespace(repoId) + "/")) {
            for (var b : (Iterable<dev.atrium.blob.api.Blob>) blobsOf::iterator) {
                blobs.delete(b.key());
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("the Actions files of deleted repository {} were not all deleted", repoId, e);
        }
    }

    private void sweepDeleted() {
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
            LOG.warn("the sweep for Actions data of deleted repositories failed; the next start tries again", e);
        }
    }
}
