package dev.atrium.sessions.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import dev.atrium.sessions.internal.SessionStore.Session;
import dev.atrium.sessions.internal.WorkTree.Change;
import dev.atrium.sessions.internal.WorkTree.Entry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file-sync sessions of this server: their lifecycle (start, stop with one commit, resume, discard, heartbeat,
 * expiry), their work trees under {@code <data>/sessions/}, and the reaper, one scheduled thread that expires idle
 * sessions and removes work trees nobody owns any more. Every change of one session runs under that session's lock
 * and re-reads its row first, so a stop, an upload and the reaper never see each other half done.
 *
 * <p>A bundle stop ends the reaper and nothing else: work trees of active sessions stay on disk, and the next start
 * of the bundle (or its reaper, once they expire) finds them.
 *
 * <p>Why one class of this size: every operation is the same few steps on the same three things (the row, the work
 * tree, the bare repository), under the same lock; apart, each step would need the others' state passed around.
 */
@Component(
        service = SyncSessions.class,
        configurationPid = "dev.atrium.sessions",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = SyncSessions.Config.class)
public class SyncSessions {

    private static final Logger LOG = LoggerFactory.getLogger(SyncSessions.class);

    @ObjectClassDefinition(name = "Atrium file-sync sessions")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA); work trees live in its sessions/")
        String dataDirectory() default "data";

        @AttributeDefinition(
                description = "Seconds a session may go without a heartbeat or an edit before it expires, when the"
                        + " start does not say (ATRIUM_SESSIONS_IDLE_TIMEOUT_S)")
        int idleTimeoutSeconds() default 1800;

        @AttributeDefinition(
                description = "The longest idle timeout a start may ask for (ATRIUM_SESSIONS_MAX_IDLE_TIMEOUT_S)")
        int maxIdleTimeoutSeconds() default 86_400;

        @AttributeDefinition(description = "Seconds between two runs of the reaper (ATRIUM_SESSIONS_REAP_S)")
        int reapSeconds() default 15;

        @AttributeDefinition(description = "The largest file an upload may write (ATRIUM_SESSIONS_MAX_FILE_BYTES)")
        long maxFileBytes() default 10L * 1024 * 1024;

        @AttributeDefinition(
                description = "The most bytes of files a session checks out (ATRIUM_SESSIONS_MAX_TREE_BYTES)")
        long maxTreeBytes() default 256L * 1024 * 1024;

        @AttributeDefinition(
                description = "The most active sessions one Principal may have at once; each holds a work tree on"
                        + " the server's disk (ATRIUM_SESSIONS_MAX_ACTIVE)")
        int maxActivePerPrincipal() default 10;
    }

    /** The most an upload may declare, whatever the operator sets: the route's body limit. */
    static final long MAX_FILE_BYTES_CAP = 64L * 1024 * 1024;

    static final String NOT_FOUND = "session not found";
    private static final int MAX_LISTED_CHANGES = 1000;
    private static final Duration PUSH_LOCK_WAIT = Duration.ofSeconds(10);
    private static final Duration SESSION_LOCK_WAIT = Duration.ofSeconds(30);
    private static final Pattern SESSION_ID = Pattern.compile("ses_[0-9A-Za-z]{20}");

    private final SessionStore store;
    private final RepositoryRegistry repositories;
    private final Path root;
    private final Duration defaultIdle;
    private final Duration maxIdle;
    private final long maxFileBytes;
    private final long maxTreeBytes;
    private final int maxActive;
    private final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();
    private final ScheduledExecutorService reaper = NamedThreads.scheduler("sessions-reaper");

    /** Names and emails of Principals for commit authors; without it the author is the Principal's id. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile PrincipalDirectory directory;

    @Activate
    public SyncSessions(Config config, @Reference SessionStore store, @Reference RepositoryRegistry repositories) {
        this.store = store;
        this.repositories = repositories;
        this.root = Path.of(config.dataDirectory()).toAbsolutePath().resolve("sessions");
        this.maxIdle = Duration.ofSeconds(Math.max(1, config.maxIdleTimeoutSeconds()));
        this.defaultIdle =
                Duration.ofSeconds(Math.max(1, Math.min(config.idleTimeoutSeconds(), (int) maxIdle.toSeconds())));
        this.maxFileBytes = Math.max(1, Math.min(config.maxFileBytes(), MAX_FILE_BYTES_CAP));
        this.maxTreeBytes = Math.max(1, config.maxTreeBytes());
        this.maxActive = Math.max(1, config.maxActivePerPrincipal());
        Duration every = Duration.ofSeconds(Math.max(1, config.reapSeconds()));
        NamedThreads.repeat(reaper, this::reap, every, every);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        reaper.shutdownNow();
        if (!reaper.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.warn("the sessions reaper did not stop within 10 s");
        }
    }

    Duration defaultIdle() {
        return defaultIdle;
    }

    Duration maxIdle() {
        return maxIdle;
    }

    long maxFileBytes() {
        return maxFileBytes;
    }

    WorkTree workTree(String sessionId) {
        return new WorkTree(root.resolve(sessionId));
    }

    // ------------------------------------------------------------------------------------------- finding

    /**
     * The session {@code id} when the caller owns its workspace; otherwise the same 404 as a missing one. A session
     * past its expiry that the reaper has not reached yet is expired here first.
     */
    Session owned(Caller caller, String id, dev.atrium.kernel.api.OwnerScope ownerScope) {
        if (id == null || !SESSION_ID.matcher(id).matches()) {
            throw ApiException.notFound(NOT_FOUND);
        }
        Session s = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            ownerScope.require(caller, s.spaceId());
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
        if (!caller.principalId().equals(s.principalId())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        if (s.active() && s.overdue()) {
            expire(id);
            s = fresh(id);
        }
        return s;
    }

    private Session fresh(String id) {
        return store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    /** The session's repository, or 404 when it was deleted. */
    Repository repository(Session s) {
        return repositories
                .byId(s.repoId())
                .filter(r -> r.spaceId().equals(s.spaceId()))
                .orElseThrow(() -> ApiException.notFound("the session's repository no longer exists"));
    }

    Map<String, Object> toJson(Session s) {
        return s.toJson(repositories.byId(s.repoId()).map(Repository::name).orElse(null));
    }

    private <T> T locked(String id, Supplier<T> work) {
        ReentrantLock lock = locks.computeIfAbsent(id, k -> new ReentrantLock());
        try {
            if (!lock.tryLock(SESSION_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw ApiException.conflict("the session is busy with another request; try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted while waiting for the session");
        }
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    private static Session requireActive(Session s) {
        if (!s.active()) {
            throw ApiException.conflict("the session is " + s.state()
                    + (SessionStore.STOPPED.equals(s.state()) ? ": resume it first" : ": start a new one"));
        }
        return s;
    }

    /** The active session's work tree, 409 when it is not on this server's disk. */
    private WorkTree presentTree(Session s) {
        WorkTree tree = workTree(s.id());
        if (!tree.present()) {
            throw ApiException.conflict("the session's work tree is not on this server: resume the session to check"
                    + " the branch out again");
        }
        return tree;
    }

    private org.eclipse.jgit.lib.Repository open(Repository r) {
        try {
            return new FileRepositoryBuilder()
                    .setGitDir(repositories.directory(r).toFile())
                    .setMustExist(true)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ObjectId head(org.eclipse.jgit.lib.Repository git, String branch) throws IOException {
        Ref ref = git.exactRef(Constants.R_HEADS + branch);
        return ref == null ? null : ref.getObjectId();
    }

    private static ObjectId id(String hex) {
        return hex == null ? null : ObjectId.fromString(hex);
    }

    List<Map<String, Object>> list(String spaceId, String state, int limit, int offset) {
        return store.list(spaceId, state, limit, offset).stream()
                .map(this::toJson)
                .toList();
    }

    long count(String spaceId, String state) {
        return store.count(spaceId, state);
    }

    // ------------------------------------------------------------------------------------------- start

    /**
     * A new active session of {@code repoRef} (a repository's name or id in the workspace) on {@code branch} (null:
     * the repository's default branch), its work tree checked out from the branch's head.
     */
    Session start(Caller caller, SpaceRef space, String repoRef, String branch, Duration idle) {
        Repository repo = repositories
                .find(space.id(), repoRef)
                .or(() -> repositories.byId(repoRef).filter(r -> r.spaceId().equals(space.id())))
                .orElseThrow(() -> ApiException.notFound("repository not found"));
        repo = repositories.writable(caller, repo.id());
        String name = branch == null ? repo.defaultBranch() : branch;
        String problem = branchProblem(name);
        if (problem != null) {
            throw ApiException.badRequest("branch: " + problem);
        }
        ObjectId base;
        try (org.eclipse.jgit.lib.Repository git = open(repo)) {
            base = head(git, name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (base == null && branch != null && !branch.equals(repo.defaultBranch())) {
            throw ApiException.notFound("branch " + branch + " not found");
        }
        if (base != null && name.equals(repo.defaultBranch()) && repositories.mergesOnly(repo)) {
            throw mergesOnly(repo);
        }
        // each active session holds a checkout on the server's disk: without a bound, one Principal could fill it
        if (store.activeOf(caller.principalId()) >= maxActive) {
            throw new ApiException(
                    429,
                    "RATE_LIMITED",
                    "you have " + maxActive + " active sessions, the most one may have: stop or discard one first");
        }
        Session s =
                store.create(space.id(), repo.id(), caller.principalId(), name, base == null ? null : base.name(), (int)
                        idle.toSeconds());
        Repository r = repo;
        return locked(s.id(), () -> {
            WorkTree tree = workTree(s.id());
            try (org.eclipse.jgit.lib.Repository git = open(r)) {
                tree.checkout(git, base, maxTreeBytes);
            } catch (IOException | RuntimeException e) {
                removeQuietly(tree);
                store.discard(s.id());
                if (e instanceof RuntimeException re) {
                    throw re;
                }
                throw new UncheckedIOException((IOException) e);
            }
            return s;
        });
    }

    String branchProblem(String branch) {
        if (branch.isEmpty() || branch.length() > 200) {
            return "a branch name must be 1 to 200 characters";
        }
        if (branch.startsWith("-") || branch.equals("HEAD")) {
            return "'" + branch + "' is not a branch name";
        }
        return repositories.refNameProblem(Constants.R_HEADS + branch);
    }

    private static ApiException mergesOnly(Repository r) {
        return ApiException.conflict("the default branch " + r.defaultBranch()
                + " takes merges of pull requests only (merges_only): start the session on another branch and open"
                + " a pull request");
    }

    // ------------------------------------------------------------------------------------------- files

    /** Every file of the active session's work tree: path, size, blob sha, type. */
    List<Map<String, Object>> files(Session s) {
        requireActive(s);
        return locked(s.id(), () -> {
            WorkTree tree = presentTree(requireActive(fresh(s.id())));
            List<Map<String, Object>> out = new ArrayList<>();
            try {
                for (Map.Entry<String, Entry> e : tree.scan().entrySet()) {
                    out.add(fileJson(e.getKey(), e.getValue()));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return out;
        });
    }

    static Map<String, Object> fileJson(String path, Entry e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("path", path);
        m.put("size", e.size());
        m.put("sha", e.id().name());
        m.put(
                "type",
                e.mode() == org.eclipse.jgit.lib.FileMode.SYMLINK
                        ? "symlink"
                        : e.mode() == org.eclipse.jgit.lib.FileMode.EXECUTABLE_FILE ? "executable" : "file");
        return m;
    }

    /** The regular file at {@code path} of the active session's work tree. */
    Path read(Session s, String path) {
        requireActive(s);
        WorkTree.checkPath(path);
        return locked(s.id(), () -> presentTree(requireActive(fresh(s.id()))).readable(path));
    }

    /**
     * Writes one file; answers its new description and whether it is new. The body is received into the session's
     * scratch directory first, outside the session's lock, so a slow upload holds up no other request.
     */
    Map<String, Object> write(Session s, String path, InputStream content) {
        requireActive(s);
        WorkTree.checkPath(path);
        WorkTree tree = presentTree(s);
        Path upload;
        try {
            upload = tree.receive(content, maxFileBytes);
        } catch (IOException e) {
            throw failure(e);
        }
        try {
            return locked(s.id(), () -> {
                presentTree(requireActive(fresh(s.id())));
                try {
                    boolean created = tree.place(path, upload);
                    store.touch(s.id(), false);
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("file", fileJson(path, tree.scanOne(path)));
                    m.put("created", created);
                    return m;
                } catch (IOException e) {
                    throw failure(e);
                }
            });
        } finally {
            try {
                Files.deleteIfExists(upload);
            } catch (IOException e) {
                LOG.warn("cannot remove an upload's scratch file: {}", e.toString());
            }
        }
    }

    void delete(Session s, String path) {
        requireActive(s);
        WorkTree.checkPath(path);
        locked(s.id(), () -> {
            WorkTree tree = presentTree(requireActive(fresh(s.id())));
            try {
                tree.delete(path);
            } catch (IOException e) {
                throw failure(e);
            }
            store.touch(s.id(), false);
            return null;
        });
    }

    /** A file system's refusal of a name is the client's (400); anything else is the server's. */
    private static RuntimeException failure(IOException e) {
        if (e instanceof java.nio.file.FileSystemException fs
                && fs.getReason() != null
                && fs.getReason().contains("too long")) {
            return ApiException.badRequest("the path is too long for this server's file system");
        }
        return new UncheckedIOException(e);
    }

    // ------------------------------------------------------------------------------------------- health

    /** The session's state with the branch's head now and what its work tree changed since its base. */
    Map<String, Object> health(Session s) {
        return locked(s.id(), () -> {
            Session now = fresh(s.id());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", now.id());
            m.put("state", now.state());
            m.put("branch", now.branch());
            m.put("base", now.baseCommit());
            m.put("commit", now.commitId());
            m.put("expires_at", now.expiresAt().toString());
            m.put("last_heartbeat_at", now.lastHeartbeatAt().toString());
            WorkTree tree = workTree(now.id());
            boolean present = now.active() && tree.present();
            m.put("work_tree", present);
            String head = null;
            List<Change> changes = List.of();
            Optional<Repository> repo = repositories.byId(now.repoId());
            if (repo.isPresent()) {
                try (org.eclipse.jgit.lib.Repository git = open(repo.get())) {
                    ObjectId h = head(git, now.branch());
                    head = h == null ? null : h.name();
                    if (present) {
                        changes = WorkTree.changes(WorkTree.treeOf(git, id(now.baseCommit())), tree.scan());
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            m.put("head", head);
            m.put("changes", counts(changes));
            return m;
        });
    }

    static Map<String, Object> counts(List<Change> changes) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("added", changes.stream().filter(c -> c.kind().equals("added")).count());
        m.put(
                "modified",
                changes.stream().filter(c -> c.kind().equals("modified")).count());
        m.put(
                "deleted",
                changes.stream().filter(c -> c.kind().equals("deleted")).count());
        m.put(
                "files",
                changes.stream()
                        .limit(MAX_LISTED_CHANGES)
                        .map(c -> Map.of("path", c.path(), "change", c.kind()))
                        .toList());
        return m;
    }

    // ------------------------------------------------------------------------------------------- heartbeat

    Session heartbeat(Session s) {
        return locked(s.id(), () -> {
            requireActive(fresh(s.id()));
            if (!store.touch(s.id(), true)) {
                throw ApiException.conflict("the session is no longer active");
            }
            return fresh(s.id());
        });
    }

    // ------------------------------------------------------------------------------------------- stop

    /** What a stop did: the session now, the commit it made (null: there was nothing to commit), the changes. */
    record Stopped(Session session, RevCommit commit, List<Change> changes) {}

    /**
     * Commits every change of the work tree as one commit on the session's branch and stops the session. When the
     * branch moved since the base, the commit goes on top of its new head if none of the session's changes touch a
     * file the branch changed; otherwise 409 {@code CONFLICT} naming the files, and the session stays as it was.
     */
    Stopped stop(Caller caller, Session s, String message, PersonIdent author) {
        return locked(s.id(), () -> {
            Session now = requireActive(fresh(s.id()));
            Repository repo = repository(now);
            WorkTree tree = presentTree(now);
            PersonIdent committer = identity(caller);
            PersonIdent by = author == null ? committer : author;
            try (RepositoryRegistry.PushLock held = repositories.lockForPush(repo, PUSH_LOCK_WAIT);
                    org.eclipse.jgit.lib.Repository git = open(repo);
                    ObjectInserter inserter = git.newObjectInserter()) {
                ObjectId base = id(now.baseCommit());
                SortedMap<String, Entry> baseTree = WorkTree.treeOf(git, base);
                List<Change> changes = WorkTree.changes(baseTree, tree.scan());
                if (changes.isEmpty()) {
                    return finishStop(now, tree, null, changes);
                }
                ObjectId head = head(git, now.branch());
                // as for the repos API's commits: a merges-only default branch may still be made (its first commit)
                if (head != null && now.branch().equals(repo.defaultBranch()) && repositories.mergesOnly(repo)) {
                    throw mergesOnly(repo);
                }
                SortedMap<String, Entry> onto = baseTree;
                if (!Objects.equals(head, base)) {
                    if (head == null) {
                        throw ApiException.conflict("the branch " + now.branch()
                                + " was deleted since the session started; nothing was committed and the session"
                                + " keeps its changes");
                    }
                    onto = WorkTree.treeOf(git, head);
                    Set<String> theirs = WorkTree.changedPaths(baseTree, onto);
                    Set<String> both = new TreeSet<>();
                    for (Change c : changes) {
                        if (theirs.contains(c.path())) {
                            both.add(c.path());
                        }
                    }
                    if (!both.isEmpty()) {
                        throw conflict(now.branch(), both);
                    }
                }
                ObjectId treeId;
                try {
                    treeId = tree.writeTree(git, inserter, onto, changes);
                } catch (WorkTree.Clash clash) {
                    throw conflict(now.branch(), Set.of(clash.path));
                }
                RevCommit parent = head == null ? null : git.parseCommit(head);
                if (parent != null && parent.getTree().equals(treeId)) {
                    // the branch already holds exactly these files
                    return finishStop(now, tree, null, changes);
                }
                CommitBuilder cb = new CommitBuilder();
                cb.setTreeId(treeId);
                if (parent != null) {
                    cb.setParentId(parent);
                }
                cb.setAuthor(by);
                cb.setCommitter(committer);
                cb.setMessage(message.endsWith("\n") ? message : message + "\n");
                ObjectId commit = inserter.insert(cb);
                inserter.flush();
                String refName = Constants.R_HEADS + now.branch();
                RefUpdate u = git.updateRef(refName);
                u.setExpectedOldObjectId(head == null ? ObjectId.zeroId() : head);
                u.setNewObjectId(commit);
                u.setForceUpdate(false);
                u.setRefLogMessage("session " + now.id() + ": " + firstLine(message), false);
                RefUpdate.Result result = u.update();
                switch (result) {
                    case NEW, FAST_FORWARD -> {}
                    case LOCK_FAILURE, REJECTED, REJECTED_CURRENT_BRANCH, REJECTED_MISSING_OBJECT ->
                        throw ApiException.conflict("the branch " + now.branch()
                                + " moved while committing; nothing was committed and the session keeps its changes:"
                                + " stop again");
                    default -> throw new IllegalStateException("ref update of " + refName + " failed: " + result);
                }
                RefChange change =
                        new RefChange(refName, (head == null ? ObjectId.zeroId() : head).name(), commit.name());
                repositories.pushed(repo, caller.principalId(), List.of(change));
                return finishStop(now, tree, git.parseCommit(commit), changes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private Stopped finishStop(Session s, WorkTree tree, RevCommit commit, List<Change> changes) {
        if (!store.stop(s.id(), commit == null ? null : commit.name())) {
            throw ApiException.conflict("the session is no longer active");
        }
        // the commit holds the work tree now; resume checks the branch out again
        removeQuietly(tree);
        return new Stopped(fresh(s.id()), commit, changes);
    }

    private static ApiException conflict(String branch, Set<String> paths) {
        List<String> shown = paths.stream().sorted().limit(50).toList();
        return ApiException.conflict("the branch " + branch + " changed files this session changed too, since its"
                + " base: " + String.join(", ", shown) + (paths.size() > shown.size() ? ", …" : "")
                + ". Nothing was committed and the session keeps its changes: resume it to move it onto the branch's"
                + " head (its own versions of these files are kept), review them, and stop again");
    }

    /** The Principal as a commit author: its name and email in the kernel's directory when it has them. */
    PersonIdent identity(Caller caller) {
        String id = caller.principalId();
        String name = id;
        String email = id + "@users.noreply.atrium";
        PrincipalDirectory d = directory;
        if (d != null) {
            Optional<PrincipalDirectory.Entry> entry = d.get(id);
            if (entry.isPresent()) {
                String shown = clean(entry.get().name());
                if (shown == null) {
                    shown = clean(entry.get().username());
                }
                if (shown != null) {
                    name = shown;
                }
                String mail = clean(entry.get().email());
                if (mail != null && mail.contains("@")) {
                    email = mail;
                }
            }
        }
        return new PersonIdent(name, email);
    }

    /** A name or email fit for an author line (no '<', '>', control characters), or null when nothing is left. */
    static String clean(String value) {
        if (value == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        value.codePoints()
                .filter(c -> c != '<' && c != '>' && !Character.isISOControl(c))
                .forEach(sb::appendCodePoint);
        String out = sb.toString().trim();
        return out.isEmpty() ? null : out;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    // ------------------------------------------------------------------------------------------- resume

    /**
     * What a resume did: the session now, whether the work tree moved onto the branch's head, and the files the
     * branch changed where the session's own version was kept.
     */
    record Resumed(Session session, boolean moved, List<String> kept) {}

    /**
     * A stopped session becomes active again on the branch's head (its commit, or its base, when the branch is gone),
     * checked out again. An active one moves onto the branch's head, keeping its own changes (its own version of a
     * file the branch changed too), or is checked out again when its work tree is gone.
     */
    Resumed resume(Session s) {
        return locked(s.id(), () -> {
            Session now = fresh(s.id());
            if (!now.active() && !SessionStore.STOPPED.equals(now.state())) {
                throw ApiException.conflict("the session is " + now.state() + ": start a new one");
            }
            Repository repo = repository(now);
            WorkTree tree = workTree(now.id());
            try (org.eclipse.jgit.lib.Repository git = open(repo)) {
                ObjectId head = head(git, now.branch());
                if (!now.active() || !tree.present()) {
                    ObjectId from =
                            head != null ? head : now.commitId() != null ? id(now.commitId()) : id(now.baseCommit());
                    removeQuietly(tree);
                    try {
                        tree.checkout(git, from, maxTreeBytes);
                    } catch (IOException | RuntimeException e) {
                        removeQuietly(tree);
                        throw e;
                    }
                    boolean ok = now.active()
                            ? store.rebase(now.id(), from == null ? null : from.name())
                            : store.resume(now.id(), from == null ? null : from.name());
                    if (!ok) {
                        removeQuietly(tree);
                        throw ApiException.conflict("the session changed while resuming it; try again");
                    }
                    return new Resumed(fresh(now.id()), true, List.of());
                }
                ObjectId base = id(now.baseCommit());
                if (head == null || head.equals(base)) {
                    store.touch(now.id(), true);
                    return new Resumed(fresh(now.id()), false, List.of());
                }
                SortedMap<String, Entry> baseTree = WorkTree.treeOf(git, base);
                List<Change> mine = WorkTree.changes(baseTree, tree.scan());
                SortedMap<String, Entry> headTree = WorkTree.treeOf(git, head);
                Set<String> theirs = WorkTree.changedPaths(baseTree, headTree);
                List<String> clashes = clashes(mine, headTree, theirs);
                if (!clashes.isEmpty()) {
                    // the session's file would take the place of a directory the branch gained meanwhile, or its
                    // directory the place of a file: moving on would delete theirs, so nothing moves
                    throw ApiException.conflict("the branch changed these paths into a file where the session has a"
                            + " directory, or a directory where it has a file: " + String.join(", ", clashes)
                            + "; move or discard the session's ones, then resume");
                }
                List<String> kept = mine.stream()
                        .map(Change::path)
                        .filter(theirs::contains)
                        .sorted()
                        .toList();
                tree.rebase(git, head, mine, maxTreeBytes);
                store.rebase(now.id(), head.name());
                return new Resumed(fresh(now.id()), true, kept);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * The session's added or modified paths that clash with what the branch changed since the base: a file of the
     * session where the head now has a directory with changed paths under it, or a directory of the session (a path
     * under it) where the head now has a changed file.
     */
    static List<String> clashes(List<Change> mine, SortedMap<String, Entry> headTree, Set<String> theirs) {
        List<String> out = new ArrayList<>();
        for (Change c : mine) {
            if (c.entry() == null) {
                continue; // a deletion leaves room for whatever the branch put there
            }
            String p = c.path();
            boolean clash = headTree.subMap(p + "/", p + "0").keySet().stream().anyMatch(theirs::contains);
            for (int i = p.indexOf('/'); !clash && i > 0; i = p.indexOf('/', i + 1)) {
                String parent = p.substring(0, i);
                clash = headTree.containsKey(parent) && theirs.contains(parent);
            }
            if (clash) {
                out.add(p);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------- discard, expiry

    /** Ends an active or stopped session without committing; its work tree is removed. */
    Session discard(Session s) {
        return locked(s.id(), () -> {
            Session now = fresh(s.id());
            if (!store.discard(now.id())) {
                throw ApiException.conflict("the session is " + now.state() + " already");
            }
            removeQuietly(workTree(now.id()));
            return fresh(now.id());
        });
    }

    /**
     * Ends the open sessions of a deleted repository: discarded, their work trees left to the reaper (this runs on
     * EventAdmin's thread, which must not wait for a large tree to be removed).
     */
    void repositoryDeleted(String repoId) {
        for (String id : store.openOfRepository(repoId)) {
            store.discard(id);
        }
    }

    private void expire(String id) {
        locked(id, () -> {
            if (store.expire(id)) {
                removeQuietly(workTree(id));
                LOG.info("session {} expired; its work tree is removed", id);
            }
            return null;
        });
    }

    /**
     * One run of the reaper: expires the active sessions past their expiry, then removes the directories under
     * {@code sessions/} of sessions that are not active (left by a stop, discard or expiry that could not finish,
     * or by a server that stopped in between). A session some request holds is left for the next run.
     */
    void reap() {
        for (String id : store.overdue(100)) {
            ReentrantLock lock = locks.computeIfAbsent(id, k -> new ReentrantLock());
            if (lock.tryLock()) {
                try {
                    if (store.expire(id)) {
                        removeQuietly(workTree(id));
                        LOG.info("session {} expired; its work tree is removed", id);
                    }
                } finally {
                    lock.unlock();
                }
            }
        }
        if (!Files.isDirectory(root)) {
            return;
        }
        List<String> present;
        try (Stream<Path> dirs = Files.list(root)) {
            present = dirs.map(p -> p.getFileName().toString())
                    .filter(n -> SESSION_ID.matcher(n).matches())
                    .limit(1000)
                    .toList();
        } catch (IOException e) {
            LOG.warn("cannot list {}: {}", root, e.toString());
            return;
        }
        Set<String> active = new java.util.HashSet<>(store.activeAmong(present));
        for (String id : present) {
            if (active.contains(id)) {
                continue;
            }
            ReentrantLock lock = locks.computeIfAbsent(id, k -> new ReentrantLock());
            if (lock.tryLock()) {
                try {
                    if (store.get(id).map(Session::active).orElse(false)) {
                        continue;
                    }
                    removeQuietly(workTree(id));
                } finally {
                    lock.unlock();
                }
                locks.remove(id, lock);
            }
        }
    }

    private static void removeQuietly(WorkTree tree) {
        try {
            tree.remove();
        } catch (IOException e) {
            // the reaper removes what is left of a session that is not active
            LOG.warn("cannot remove a session's work tree yet: {}", e.toString());
        }
    }
}
