package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.StoredConfig;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Repositories as rows and bare Git directories under {@code <data>/git/<id>.git}, the cross-instance push lock
 * and the events repositories publish.
 */
@Component(
        service = {RepositoryRegistry.class, Repositories.class},
        configurationPid = "dev.atrium.repos",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = Repositories.Config.class)
public class Repositories implements RepositoryRegistry {

    @ObjectClassDefinition(name = "Atrium repositories")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA); repositories live in its git/")
        String dataDirectory() default "data";

        @AttributeDefinition(
                description = "Largest pack one remote import fetches (ATRIUM_APP_DEPLOY_REMOTE_MAX_PACK_BYTES)")
        long remoteImportMaxPackBytes() default 1L << 30;

        @AttributeDefinition(
                description = "Most objects one remote import fetches (ATRIUM_APP_DEPLOY_REMOTE_MAX_OBJECTS)")
        long remoteImportMaxObjects() default 5_000_000L;

        @AttributeDefinition(
                description = "Seconds one remote import may take (ATRIUM_APP_DEPLOY_REMOTE_TIMEOUT_SECONDS)")
        int remoteImportTimeoutSeconds() default 300;

        @AttributeDefinition(
                description = "Code hosts whose branch archives a remote import falls back to when a Git fetch is over"
                        + " the limits and no blobless one is possible: host=URL template ({owner}, {repo}, {ref}),"
                        + " comma-separated (ATRIUM_APP_DEPLOY_REMOTE_ARCHIVE_HOSTS)")
        String remoteImportArchiveHosts() default DEFAULT_ARCHIVE_HOSTS;
    }

    /** GitHub's and GitLab's branch tarballs. */
    static final String DEFAULT_ARCHIVE_HOSTS =
            "github.com=https://codeload.github.com/{owner}/{repo}/tar.gz/refs/heads/{ref},"
                    + "gitlab.com=https://gitlab.com/{owner}/{repo}/-/archive/{ref}/{repo}-{ref}.tar.gz";

    private static final Logger LOG = LoggerFactory.getLogger(Repositories.class);
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    static final String ZERO = ObjectId.zeroId().name();

    private final RepositoryStore store;
    private final DataSource dataSource;
    private final Path root;
    private final RemoteImport.Limits importLimits;
    private final EgressGuard egress;
    private final RepoAccess access;
    private final ExploreStore explore;
    private final RepositoryOwners owners;
    private volatile EventAdmin events;
    /** The threads that check received objects for SHA-1 collision attacks (one per processor for each push). */
    private final java.util.concurrent.ExecutorService collisionChecks =
            java.util.concurrent.Executors.newCachedThreadPool(NamedThreads.factory("atrium-sha1-collision-check"));

    @Activate
    public Repositories(
            @Reference RepositoryStore store,
            @Reference DataSource dataSource,
            @Reference EgressGuard egress,
            @Reference RepoAccess access,
            @Reference ExploreStore explore,
            @Reference RepositoryOwners owners,
            Config config)
            throws IOException {
        this.store = store;
        this.explore = explore;
        this.owners = owners;
        this.access = access;
        this.egress = egress;
        this.dataSource = dataSource;
        this.root = Path.of(config.dataDirectory()).toAbsolutePath().resolve("git");
        this.importLimits = new RemoteImport.Limits(
                config.remoteImportMaxPackBytes(),
                config.remoteImportMaxObjects(),
                config.remoteImportTimeoutSeconds(),
                Map.copyOf(ArchiveImport.hosts(config.remoteImportArchiveHosts())));
        Files.createDirectories(root);
    }

    @Deactivate
    void deactivate() {
        collisionChecks.shutdownNow();
    }

    RemoteImport.Limits importLimits() {
        return importLimits;
    }

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void setEvents(EventAdmin events) {
        this.events = events;
    }

    void unsetEvents(EventAdmin events) {
        if (this.events == events) {
            this.events = null;
        }
    }

    RepositoryStore store() {
        return store;
    }

    /** 400 unless {@code name} is a usable repository name. */
    static String checkName(String name) {
        if (!NAME.matcher(name).matches() || name.endsWith(".git") || name.contains("..")) {
            throw ApiException.badRequest(
                    "name must be 1-100 characters of letters, digits, '.', '_' or '-', start with a letter or "
                            + "digit, and not end in .git");
        }
        return name;
    }

    /** 400 unless {@code branch} is a valid branch name. */
    static String checkBranch(String branch) {
        return GitNames.checkBranch(branch);
    }

    @Override
    public String refNameProblem(String refName) {
        return GitNames.refNameProblem(refName);
    }

    @Override
    public org.eclipse.jgit.lib.ObjectChecker newObjectChecker() {
        return GitNames.newObjectChecker();
    }

    @Override
    public org.eclipse.jgit.lib.Repository openForPush(Repository repository) throws IOException {
        return PushRepository.open(directory(repository).toFile(), collisionChecks);
    }

    @Override
    public void awaitCollisionCheck(org.eclipse.jgit.lib.Repository opened) throws IOException {
        if (opened instanceof PushRepository push) {
            push.awaitCollisionCheck();
        }
    }

    @Override
    public String resolveCommit(Repository repository, String revision) {
        try (org.eclipse.jgit.lib.Repository git = open(repository);
                org.eclipse.jgit.revwalk.RevWalk walk = new org.eclipse.jgit.revwalk.RevWalk(git)) {
            return GitReads.commit(git, walk, revision).name();
        }
    }

    @Override
    public boolean mergesOnly(Repository repository) {
        return store.mergesOnly(repository.id());
    }

    @Override
    public Optional<Repository> byId(String id) {
        return store.byId(id);
    }

    @Override
    public Access readable(Caller caller, String repoId) {
        RepoAccess.Located l = access.readable(caller, repoId);
        return new Access(l.repo(), l.owned());
    }

    @Override
    public Optional<Repository> find(String spaceId, String name) {
        String n = name.endsWith(".git") ? name.substring(0, name.length() - 4) : name;
        return store.byName(spaceId, n);
    }

    @Override
    public List<Repository> list(String spaceId) {
        return store.list(spaceId);
    }

    @Override
    public Path directory(Repository repository) {
        return root.resolve(repository.id() + ".git");
    }

    /** Opens the repository's Git directory; the caller closes it. */
    org.eclipse.jgit.lib.Repository open(Repository repository) {
        try {
            return new FileRepositoryBuilder()
                    .setGitDir(directory(repository).toFile())
                    .setMustExist(true)
                    .build();
        } catch (IOException e) {
            throw new IllegalStateException("the Git directory of " + repository.id() + " cannot be opened", e);
        }
    }

    /** Creates a row and an empty bare repository whose HEAD names {@code defaultBranch}. */
    Repository create(
            String spaceId,
            String name,
            String description,
            String visibility,
            String defaultBranch,
            boolean isDefault,
            String forkedFrom) {
        checkName(name);
        checkBranch(defaultBranch);
        String id = store.newId();
        Path dir = root.resolve(id + ".git");
        try (Git git = Git.init()
                .setBare(true)
                .setGitDir(dir.toFile())
                .setDirectory(dir.toFile())
                .setInitialBranch(defaultBranch)
                .call()) {
            StoredConfig config = git.getRepository().getConfig();
            config.setBoolean("core", null, "logAllRefUpdates", true);
            config.setBoolean("receive", null, "fsckObjects", true);
            config.setInt("protocol", null, "version", 2);
            config.setBoolean("uploadpack", null, "allowFilter", true);
            config.setBoolean("uploadpack", null, "allowReachableSHA1InWant", true);
            config.save();
        } catch (GitAPIException | IOException e) {
            deleteDirectory(dir);
            throw new IllegalStateException("cannot create the Git directory", e);
        }
        try {
            Repository r =
                    store.insert(id, spaceId, name, description, visibility, defaultBranch, isDefault, forkedFrom);
            publish(RepositoryEvents.CREATED, r, Map.of());
            return r;
        } catch (RuntimeException e) {
            deleteDirectory(dir);
            throw e;
        }
    }

    Repository update(
            Repository r,
            String name,
            String description,
            String visibility,
            String defaultBranch,
            Boolean allowForcePush) {
        if (name != null) {
            checkName(name);
        }
        if (defaultBranch != null) {
            setHead(r, checkBranch(defaultBranch));
        }
        Repository updated = store.update(r.id(), name, description, visibility, defaultBranch, allowForcePush);
        publish(RepositoryEvents.UPDATED, updated, Map.of());
        return updated;
    }

    /** Points HEAD at a branch, which must exist unless the repository has no commits yet. */
    void setHead(Repository r, String branch) {
        try (org.eclipse.jgit.lib.Repository git = open(r)) {
            boolean empty =
                    git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS).isEmpty();
            if (!empty && git.exactRef(Constants.R_HEADS + branch) == null) {
                throw ApiException.notFound("branch " + branch + " does not exist");
            }
            RefUpdate u = git.updateRef(Constants.HEAD);
            u.disableRefLog();
            u.link(Constants.R_HEADS + branch);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    void delete(Repository r) {
        if (store.delete(r.id())) {
            deleteDirectory(directory(r));
            publish(RepositoryEvents.DELETED, r, Map.of());
        }
    }

    @Override
    public ImportedRepository importRemote(
            String spaceId, String name, String description, String visibility, java.net.URI remote, String token) {
        egress.check(remote);
        Repository r = create(spaceId, name, description, visibility, "main", false, null);
        RemoteImport.Outcome outcome;
        // every writer of packs holds the push lock (maintenance deletes the packs a repack made redundant under it)
        try (PushLock lock = lockForPush(r, Duration.ofSeconds(10));
                org.eclipse.jgit.lib.Repository git = open(r)) {
            outcome = RemoteImport.run(egress, remote, token, importLimits, git);
            store.setUpstream(r.id(), outcome.url(), outcome.partial());
            UpstreamSync.track(git);
            String head = remoteHead(git);
            if (head != null && !head.equals(r.defaultBranch())) {
                r = update(r, null, null, null, head, null);
            }
        } catch (IOException e) {
            delete(r);
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            delete(r);
            throw e;
        }
        return new ImportedRepository(r, outcome.partial(), outcome.url());
    }

    /** The branch to make default after an import: main or master when present, else the first branch. */
    private static String remoteHead(org.eclipse.jgit.lib.Repository git) {
        try {
            List<org.eclipse.jgit.lib.Ref> heads = git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS);
            for (String preferred : List.of("main", "master")) {
                if (heads.stream().anyMatch(h -> h.getName().equals(Constants.R_HEADS + preferred))) {
                    return preferred;
                }
            }
            return heads.isEmpty() ? null : heads.get(0).getName().substring(Constants.R_HEADS.length());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Copies every branch and tag of {@code source} into a new repository; the source is only read. */
    Repository fork(Repository source, String spaceId, String name) {
        Repository fork = create(
                spaceId, name, source.description(), source.visibility(), source.defaultBranch(), false, source.id());
        try (PushLock lock = lockForPush(fork, Duration.ofSeconds(10));
                Git git = Git.wrap(open(fork))) {
            CheckedFetch.fetch(git, directory(source).toUri().toString(), true, c -> {}, null, null);
            UpstreamSync.track(git.getRepository());
        } catch (ApiException e) {
            delete(fork);
            throw e;
        } catch (GitAPIException | IOException | RuntimeException e) {
            delete(fork);
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof org.eclipse.jgit.errors.CorruptObjectException corrupt) {
                    // history stored before objects were checked on the way in: the fork would carry it on
                    throw ApiException.conflict(
                            "the repository holds an object git fsck refuses, so it cannot be forked: "
                                    + corrupt.getMessage());
                }
            }
            throw new IllegalStateException("the fork could not copy " + source.id(), e);
        }
        return fork;
    }

    static void deleteDirectory(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("could not remove {} completely: {}", dir, e.toString());
        }
    }

    @Override
    public PushLock lockForPush(Repository repository, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        Connection c = null;
        try {
            c = dataSource.getConnection();
            c.setAutoCommit(true);
            while (true) {
                if (Sql.one(
                                c,
                                "SELECT pg_try_advisory_lock(hashtext('atrium.repo.push'), hashtext(?))",
                                rs -> rs.getBoolean(1),
                                repository.id())
                        .orElse(false)) {
                    Connection held = c;
                    c = null;
                    return () -> release(held, repository.id());
                }
                if (System.nanoTime() > deadline) {
                    throw ApiException.conflict("another push to this repository is in progress; try again");
                }
                Thread.sleep(50);
            }
        } catch (SQLException e) {
            throw Sql.translate(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.conflict("interrupted while waiting for another push");
        } finally {
            if (c != null) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // the pool discards it
                }
            }
        }
    }

    private static void release(Connection c, String repoId) {
        try (c) {
            Sql.exec(c, "SELECT pg_advisory_unlock(hashtext('atrium.repo.push'), hashtext(?))", repoId);
        } catch (SQLException e) {
            LOG.warn("releasing the push lock of {}: {}", repoId, e.toString());
        }
    }

    @Override
    public void pushed(Repository repository, String pusherPrincipalId, List<RefChange> changes) {
        if (changes.isEmpty()) {
            return;
        }
        List<String> refs = new ArrayList<>();
        List<Map<String, Object>> commits = new ArrayList<>();
        try (org.eclipse.jgit.lib.Repository git = open(repository);
                RevWalk walk = new RevWalk(git)) {
            for (RefChange ch : changes) {
                refs.add(ch.ref() + " " + ch.oldId() + " " + ch.newId());
                if (!ZERO.equals(ch.newId())) {
                    try {
                        walk.markStart(walk.parseCommit(ObjectId.fromString(ch.newId())));
                    } catch (IOException notACommit) {
                        // a tag of a tree or blob: no commits to report
                    }
                }
                if (!ZERO.equals(ch.oldId())) {
                    try {
                        walk.markUninteresting(walk.parseCommit(ObjectId.fromString(ch.oldId())));
                    } catch (IOException gone) {
                        // the old commit may be unreachable after a force push
                    }
                }
            }
            for (RevCommit c : walk) {
                if (commits.size() == 100) {
                    break;
                }
                Map<String, Object> m = new HashMap<>();
                m.put("sha", c.name());
                m.put("message", c.getFullMessage());
                m.put("author_name", c.getAuthorIdent().getName());
                m.put("author_email", c.getAuthorIdent().getEmailAddress());
                m.put("time", c.getAuthorIdent().getWhenAsInstant().toString());
                commits.add(m);
            }
        } catch (RuntimeException e) {
            LOG.warn("reading pushed commits of {}: {}", repository.id(), e.toString());
        }
        Map<String, Object> props = new HashMap<>();
        props.put(RepositoryEvents.REFS, refs);
        props.put(RepositoryEvents.COMMITS, commits);
        if (pusherPrincipalId != null) {
            props.put(RepositoryEvents.PRINCIPAL_ID, pusherPrincipalId);
        }
        publish(RepositoryEvents.PUSHED, repository, props);
        store.recordPush(repository.id(), defaultBranchLanguage(repository, changes));
        for (RefChange ch : changes) {
            boolean created = ZERO.equals(ch.oldId());
            boolean deleted = ZERO.equals(ch.newId());
            String topic = null;
            if (ch.ref().startsWith(Constants.R_HEADS) && (created || deleted)) {
                topic = created ? RepositoryEvents.BRANCH_CREATED : RepositoryEvents.BRANCH_DELETED;
            } else if (ch.ref().startsWith(Constants.R_TAGS) && (created || deleted)) {
                topic = created ? RepositoryEvents.TAG_CREATED : RepositoryEvents.TAG_DELETED;
            }
            if (topic != null) {
                publish(
                        topic,
                        repository,
                        Map.of(
                                RepositoryEvents.REF,
                                ch.ref(),
                                RepositoryEvents.OLD_ID,
                                ch.oldId(),
                                RepositoryEvents.NEW_ID,
                                ch.newId()));
            }
        }
    }

    @Override
    public Optional<PublicRepository> publicRepository(String repoId) {
        return repoId == null ? Optional.empty() : explore.publicById(repoId).flatMap(this::publicView);
    }

    @Override
    public Optional<PublicRepository> publicRepository(String owner, String name) {
        if (owner == null || name == null) {
            return Optional.empty();
        }
        return owners.byPath(owner)
                .flatMap(o -> explore.publicByName(o.space().id(), name))
                .flatMap(this::publicView);
    }

    private Optional<PublicRepository> publicView(ExploreStore.Listed l) {
        return owners.of(l.repo().spaceId())
                .map(o -> new PublicRepository(
                        l.repo(),
                        o.username(),
                        o.path(),
                        o.path() + "/" + l.repo().name(),
                        l.stars()));
    }

    /** The language of the default branch when the push moved it (null when it did not, or it has none). */
    private String defaultBranchLanguage(Repository repository, List<RefChange> changes) {
        for (RefChange ch : changes) {
            if (ch.ref().equals(Constants.R_HEADS + repository.defaultBranch()) && !ZERO.equals(ch.newId())) {
                try (org.eclipse.jgit.lib.Repository git = open(repository)) {
                    return Languages.detect(git, ObjectId.fromString(ch.newId()));
                } catch (IOException | RuntimeException e) {
                    LOG.warn("detecting the language of {}: {}", repository.id(), e.toString());
                }
            }
        }
        return null;
    }

    void publish(String topic, Repository r, Map<String, Object> extra) {
        if (topic.equals(RepositoryEvents.STARRED)
                || topic.equals(RepositoryEvents.UNSTARRED)
                || (topic.equals(RepositoryEvents.CREATED) && r.forkedFrom() != null)) {
            explore.starsChanged(); // trending is counted from stars and forks
        }
        EventAdmin admin = events;
        if (admin == null) {
            return;
        }
        Map<String, Object> props = new HashMap<>(extra);
        props.put(RepositoryEvents.REPO_ID, r.id());
        props.put(RepositoryEvents.SPACE_ID, r.spaceId());
        props.put(RepositoryEvents.NAME, r.name());
        props.put(RepositoryEvents.VISIBILITY, r.visibility());
        admin.postEvent(new Event(topic, props));
    }
}
