package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Jobs;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry.PushLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps repositories maintained: JGit's garbage collection with reachability bitmaps, without which serving a clone
 * walks every commit and tree of the history. A push that leaves a repository needing it (no bitmap yet over enough
 * objects, too many packs, too many loose objects) queues it, an hourly sweep catches what pushes did not, and the
 * operator can ask for it. One repository at a time on one thread of its own, under the repository's push lock
 * (pushes wait; reads never do: old packs stay readable until their readers close them).
 */
@Component(
        service = {RepositoryMaintenance.class, EventHandler.class},
        configurationPid = "dev.atrium.repos.maintenance",
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        property = EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.PUSHED)
@Designate(ocd = RepositoryMaintenance.Config.class)
public class RepositoryMaintenance implements EventHandler {

    @ObjectClassDefinition(name = "Atrium repository maintenance")
    public @interface Config {
        @AttributeDefinition(description = "A repository of at least this many objects without a bitmap is collected")
        long bitmapMinObjects() default 2000;

        @AttributeDefinition(description = "A repository with more pack files than this is collected")
        int maxPacks() default 16;

        @AttributeDefinition(description = "A repository with more loose objects than this is collected")
        long maxLooseObjects() default 2000;

        @AttributeDefinition(description = "Minutes between sweeps over every repository; 0: no sweeps")
        long sweepMinutes() default 60;

        @AttributeDefinition(
                description = "Longest wait in seconds for a push in progress before a collection is retried later")
        long lockWaitSeconds() default 60;
    }

    /** Where a repository stands: idle, queued or running, and what the last run did. */
    public record Status(
            String state,
            Instant lastRunAt,
            Long durationMs,
            String reason,
            String error,
            Integer packs,
            Integer bitmaps,
            Long looseObjects) {}

    static final String KIND = "repository-maintenance";
    /** What {@link #check} says of a repository deleted since it was queued. */
    private static final String GONE = "gone";

    private static final Logger LOG = LoggerFactory.getLogger(RepositoryMaintenance.class);

    private final Config config;
    private final RepositoryStore store;
    private final Repositories repositories;
    private final Sql sql;
    private final Jobs jobs;
    /** Repository id → "queued" or "running"; absent when idle. */
    private final Map<String, String> pending = new ConcurrentHashMap<>();
    /**
     * Repositories an operator asked for while a check of them was already queued or running (after a push, say):
     * collected once that check is done, which may have found nothing to do. Changed with {@link #pending} under
     * {@link #submitting}.
     */
    private final Set<String> asked = new HashSet<>();

    /** The operator's requests of one repository not yet run, as jobs, by repository id; under {@link #submitting}. */
    private final Map<String, Jobs.Job> requested = new HashMap<>();
    /** The latest maintenance of every repository the operator asked for; under {@link #submitting}. */
    private Jobs.Job everyRepository;

    private final Object submitting = new Object();
    private final ScheduledExecutorService worker = NamedThreads.scheduler("atrium-repo-maintenance");

    @Activate
    public RepositoryMaintenance(
            Config config,
            @Reference RepositoryStore store,
            @Reference Repositories repositories,
            @Reference DataSource dataSource,
            @Reference Jobs jobs) {
        this.config = config;
        this.jobs = jobs;
        this.store = store;
        this.repositories = repositories;
        this.sql = new Sql(dataSource);
        if (config.sweepMinutes() > 0) {
            NamedThreads.repeat(
                    worker,
                    this::sweep,
                    Duration.ofMinutes(config.sweepMinutes()),
                    Duration.ofMinutes(config.sweepMinutes()));
        }
        // what a server killed during a push left behind, once at start: the next maintenance may be an hour away
        worker.execute(this::removeAllStrayPacks);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        worker.shutdownNow();
        // a collection in progress stops at its next check of the interrupt flag; JGit leaves no half pack behind
        worker.awaitTermination(30, TimeUnit.SECONDS);
    }

    @Override
    public void handleEvent(Event event) {
        Object id = event.getProperty(RepositoryEvents.REPO_ID);
        if (id instanceof String repoId) {
            submit(repoId, false, "push");
        }
    }

    /**
     * Queues a collection of the repository now, whatever its state; the operator's request, reported as a job (the one
     * already waiting when the operator asked twice).
     */
    public Jobs.Job request(Repository repository) {
        Jobs.Job job;
        synchronized (submitting) {
            job = requested.get(repository.id());
            if (job == null) {
                job = jobs.start(KIND, "Maintenance of repository " + repository.id());
                job.progress(0, 1, "queued");
                requested.put(repository.id(), job);
            }
        }
        submit(repository.id(), true, "operator");
        return job;
    }

    /**
     * Collects every repository now, one at a time on the maintenance thread (after what it is doing), as one job with
     * progress by repository; when one runs already, that one.
     */
    public Jobs.Job maintainEveryRepository() {
        Jobs.Job job;
        synchronized (submitting) {
            if (everyRepository != null && everyRepository.snapshot().running()) {
                return everyRepository;
            }
            job = jobs.start(KIND, "Maintenance of every repository");
            job.progress(0, 0, "queued");
            everyRepository = job;
        }
        try {
            worker.execute(() -> maintainAll(job));
        } catch (RejectedExecutionException stopping) {
            job.failed("the server is stopping");
        }
        return job;
    }

    /** The latest maintenance of every repository since this bundle started; empty when none. */
    public Optional<Jobs.Job> latestOfEveryRepository() {
        synchronized (submitting) {
            return Optional.ofNullable(everyRepository);
        }
    }

    private void maintainAll(Jobs.Job job) {
        try (job) {
            List<String> ids = sql.list("SELECT id FROM repositories ORDER BY id", rs -> rs.getString(1));
            int collected = 0;
            int deleted = 0;
            List<String> failed = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                if (Thread.currentThread().isInterrupted()) {
                    job.failed("stopped after " + i + " of " + ids.size() + " repositories");
                    return;
                }
                String id = ids.get(i);
                job.progress(i, ids.size(), "repository " + (i + 1) + " of " + ids.size());
                // a check queued after a push stays queued (it finds nothing to do after this); the state shows running
                String before;
                synchronized (submitting) {
                    before = pending.putIfAbsent(id, "queued");
                }
                String error;
                try {
                    error = check(id, true, "operator: every repository");
                } finally {
                    boolean again = false;
                    synchronized (submitting) {
                        if (before == null) {
                            pending.remove(id);
                            again = asked.remove(id);
                        } else {
                            pending.put(id, before);
                        }
                    }
                    if (again) {
                        // the operator asked for this one alone meanwhile: its own job runs it
                        submit(id, true, "operator");
                    }
                }
                if (error == null) {
                    collected++;
                } else if (GONE.equals(error)) {
                    deleted++;
                } else {
                    failed.add(id + ": " + error);
                }
            }
            job.progress(ids.size(), ids.size(), "done");
            String counts = collected + " of " + ids.size() + " repositories collected, " + failed.size() + " failed"
                    + (deleted == 0 ? "" : ", " + deleted + " deleted meanwhile");
            if (failed.isEmpty()) {
                job.succeeded(counts);
            } else {
                job.failed(counts + ": " + String.join("; ", failed));
            }
        } catch (RuntimeException e) {
            LOG.warn("maintaining every repository failed: {}", e.toString());
            job.failed(e.toString());
        }
    }

    public Status status(Repository repository) {
        String state = pending.getOrDefault(repository.id(), "idle");
        return sql.one(
                        "SELECT last_run_at, duration_ms, reason, error, packs, bitmaps, loose_objects FROM repository_maintenance WHERE repo_id = ?",
                        rs -> new Status(
                                state,
                                Sql.instant(rs, "last_run_at"),
                                rs.getLong("duration_ms"),
                                rs.getString("reason"),
                                rs.getString("error"),
                                (Integer) rs.getObject("packs"),
                                (Integer) rs.getObject("bitmaps"),
                                (Long) rs.getObject("loose_objects")),
                        repository.id())
                .orElse(new Status(state, null, null, null, null, null, null, null));
    }

    private void submit(String repoId, boolean always, String reason) {
        synchronized (submitting) {
            if (pending.putIfAbsent(repoId, "queued") != null) {
                if (always) {
                    asked.add(repoId);
                }
                return;
            }
        }
        try {
            worker.execute(() -> maintain(repoId, always, reason));
        } catch (RejectedExecutionException stopping) {
            pending.remove(repoId);
        }
    }

    private void sweep() {
        for (String id : sql.list("SELECT id FROM repositories ORDER BY id", rs -> rs.getString(1))) {
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            submit(id, false, "sweep");
        }
    }

    private void maintain(String repoId, boolean always, String reason) {
        Jobs.Job job;
        synchronized (submitting) {
            job = always ? requested.remove(repoId) : null;
        }
        try {
            if (job != null) {
                job.progress(0, 1, "collecting");
            }
            String error = check(repoId, always, reason);
            if (job != null) {
                if (error == null) {
                    job.progress(1, 1, "done");
                    job.succeeded("collected");
                } else {
                    job.failed(GONE.equals(error) ? "the repository was deleted before its turn" : error);
                }
            }
        } finally {
            if (job != null) {
                job.close();
            }
            boolean again;
            synchronized (submitting) {
                pending.remove(repoId);
                again = asked.remove(repoId);
            }
            if (again) {
                submit(repoId, true, "operator");
            }
        }
    }

    /**
     * Maintains one repository: removes what unfinished pushes left, and collects it when {@code always} or when it
     * needs it. Null when it was collected or needed nothing, {@link #GONE} when the repository is gone, or what failed.
     */
    private String check(String repoId, boolean always, String reason) {
        try {
            Optional<Repository> repo = store.byId(repoId);
            if (repo.isEmpty()) {
                return GONE;
            }
            Path dir = repositories.directory(repo.get());
            removeStrayPacks(repo.get(), dir);
            try (org.eclipse.jgit.lib.Repository git = new FileRepositoryBuilder()
                    .setGitDir(dir.toFile())
                    .setMustExist(true)
                    .build()) {
                Properties before = Git.wrap(git).gc().getStatistics();
                String why = always ? reason : needs(before, status(repo.get()));
                if (why == null) {
                    return null;
                }
                return collect(repo.get(), git, always ? reason : reason + ": " + why);
            }
        } catch (IOException | GitAPIException | RuntimeException e) {
            LOG.warn("maintaining repository {} failed: {}", repoId, e.toString());
            return e.toString();
        }
    }

    private void removeAllStrayPacks() {
        try {
            for (String id : sql.list("SELECT id FROM repositories ORDER BY id", rs -> rs.getString(1))) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                Optional<Repository> repo = store.byId(id);
                if (repo.isPresent()) {
                    removeStrayPacks(repo.get(), repositories.directory(repo.get()));
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("looking for packs that unfinished pushes left failed: {}", e.toString());
        }
    }

    /**
     * Removes the temporary pack and index a push was receiving when its server died ({@code objects/incoming_*}, which
     * JGit's pack parser deletes itself whenever it is alive to: a push that fails or whose client goes away leaves
     * none). Under the repository's push lock, which every receiving push holds on every instance, so no live push's file
     * is taken.
     */
    private void removeStrayPacks(Repository repo, Path dir) {
        if (strayPacks(dir).isEmpty()) {
            return;
        }
        try (PushLock lock = repositories.lockForPush(repo, Duration.ofSeconds(config.lockWaitSeconds()))) {
            long bytes = 0;
            List<Path> stray = strayPacks(dir);
            for (Path p : stray) {
                try {
                    bytes += Files.size(p);
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    LOG.warn("repository {}: {} could not be removed: {}", repo.id(), p.getFileName(), e.toString());
                }
            }
            LOG.info(
                    "repository {}: removed {} file(s) of {} bytes that pushes which never finished left",
                    repo.id(),
                    stray.size(),
                    bytes);
        } catch (ApiException busy) {
            LOG.info(
                    "repository {} is busy with a push; what earlier pushes left is removed at its next maintenance",
                    repo.id());
        }
    }

    /** JGit's pack parser writes a push's pack as {@code objects/incoming_<n>.pack} (and its {@code .idx}) until it is whole. */
    static List<Path> strayPacks(Path gitDir) {
        Path objects = gitDir.resolve("objects");
        try (Stream<Path> files = Files.list(objects)) {
            return files.filter(p -> p.getFileName().toString().startsWith("incoming_"))
                    .toList();
        } catch (NoSuchFileException | NotDirectoryException gone) {
            return List.of();
        } catch (IOException e) {
            LOG.warn("{} could not be listed: {}", objects, e.toString());
            return List.of();
        }
    }

    /** Why the repository needs a collection, or null. */
    private String needs(Properties stats, Status last) {
        long packed = number(stats, "numberOfPackedObjects");
        long loose = number(stats, "numberOfLooseObjects");
        if (number(stats, "numberOfBitmaps") == 0 && packed + loose >= config.bitmapMinObjects()) {
            return (packed + loose) + " objects and no bitmap";
        }
        if (number(stats, "numberOfPackFiles") > config.maxPacks()) {
            return number(stats, "numberOfPackFiles") + " pack files";
        }
        // a collection leaves the unreachable objects younger than the prune window loose (a force push's, a deleted
        // branch's): counted, they would start a collection on every push for an hour that removes none of them
        long settled = last.looseObjects() != null
                        && last.lastRunAt() != null
                        && last.lastRunAt().isAfter(Instant.now().minus(Duration.ofHours(1)))
                ? last.looseObjects()
                : 0;
        if (loose - settled > config.maxLooseObjects()) {
            return loose + " loose objects";
        }
        return null;
    }

    /** Collects the repository; null when it did, else what failed. */
    private String collect(Repository repo, org.eclipse.jgit.lib.Repository git, String reason) {
        pending.put(repo.id(), "running");
        long started = System.nanoTime();
        String error = null;
        Properties after = null;
        PushLock lock;
        try {
            lock = repositories.lockForPush(repo, Duration.ofSeconds(config.lockWaitSeconds()));
        } catch (ApiException busy) {
            LOG.info("repository {} is busy with a push; its maintenance waits for the next push or sweep", repo.id());
            return "busy with a push";
        }
        try (lock) {
            // one thread: maintenance must not take the cores requests need
            git.getConfig().setInt("pack", null, "threads", 1);
            // the packs the repack made redundant go now, as git's own repack -d does: JGit keeps them an hour by
            // default, so a repository pushed to more often than maxPacks times an hour was collected again on every
            // push, holding the push lock for seconds each time. Every writer of packs holds the push lock, as this
            // does
            git.getConfig().setString("gc", null, "prunePackExpire", "now");
            Git.wrap(git)
                    .gc()
                    .setExpire(java.util.Date.from(Instant.now().minus(Duration.ofHours(1))))
                    .call();
            after = Git.wrap(git).gc().getStatistics();
        } catch (GitAPIException | RuntimeException e) {
            error = e.toString();
            LOG.warn("garbage collection of repository {} failed: {}", repo.id(), error);
        }
        long ms = (System.nanoTime() - started) / 1_000_000;
        LOG.info("repository {} maintained in {} ms ({})", repo.id(), ms, reason);
        Integer packs = after == null ? null : (int) number(after, "numberOfPackFiles");
        Integer bitmaps = after == null ? null : (int) number(after, "numberOfBitmaps");
        Long loose = after == null ? null : number(after, "numberOfLooseObjects");
        sql.update(
                "INSERT INTO repository_maintenance (repo_id, last_run_at, duration_ms, reason, error, packs, bitmaps, loose_objects) "
                        + "SELECT id, now(), ?, ?, ?, ?, ?, ? FROM repositories WHERE id = ? "
                        + "ON CONFLICT (repo_id) DO UPDATE SET last_run_at = now(), duration_ms = EXCLUDED.duration_ms, reason = EXCLUDED.reason, "
                        + "error = EXCLUDED.error, packs = EXCLUDED.packs, bitmaps = EXCLUDED.bitmaps, loose_objects = EXCLUDED.loose_objects",
                ms,
                reason,
                error,
                packs,
                bitmaps,
                loose,
                repo.id());
        return error;
    }

    private static long number(Properties stats, String key) {
        Object v = stats.get(key);
        return v instanceof Number n ? n.longValue() : v == null ? 0 : Long.parseLong(v.toString());
    }

    static Map<String, Object> body(Status s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", s.state());
        m.put("last_run_at", s.lastRunAt() == null ? null : s.lastRunAt().toString());
        m.put("duration_ms", s.durationMs());
        m.put("reason", s.reason());
        m.put("error", s.error());
        m.put("packs", s.packs());
        m.put("bitmaps", s.bitmaps());
        m.put("loose_objects", s.looseObjects());
        return m;
    }
}
