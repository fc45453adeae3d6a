package dev.atrium.repos.internal;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.errors.RepositoryNotFoundException;
import org.eclipse.jgit.internal.storage.file.FileRepository;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.PackParser;
import org.eclipse.jgit.util.sha1.SHA1;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A repository opened to receive a push: each pack parser its inserters make hashes with the JDK's SHA-1 while a
 * {@link CollisionCheck} runs collision detection over the same bytes on another thread.
 */
final class PushRepository extends FileRepository {

    private static final Logger LOG = LoggerFactory.getLogger(PushRepository.class);
    /** JGit gives no way to choose a parser's hasher; where this field is gone, the parser keeps its own. */
    private static final String HASHER_FIELD = "objectHasher";

    private final Executor executor;
    private final List<CollisionCheck> checks = new CopyOnWriteArrayList<>();
    private final java.util.concurrent.atomic.AtomicLong objectsChecked = new java.util.concurrent.atomic.AtomicLong();

    private PushRepository(FileRepositoryBuilder options, Executor executor) throws IOException {
        super(options);
        this.executor = executor;
    }

    static FileRepository open(java.io.File gitDir, Executor executor) throws IOException {
        FileRepositoryBuilder options =
                new FileRepositoryBuilder().setGitDir(gitDir).setMustExist(true);
        options.setup();
        FileRepository repository =
                collisionDetectionIsOff() ? new FileRepository(options) : new PushRepository(options, executor);
        if (!repository.getObjectDatabase().exists()) {
            repository.close();
            throw new RepositoryNotFoundException(gitDir);
        }
        return repository;
    }

    /**
     * Whether the operator switched collision detection off ({@code ATRIUM_GIT_SHA1=fast}: JGit hashes with the JDK's
     * SHA-1); then a push needs no separate check. By default JGit's hasher is its detecting {@code SHA1Java}.
     */
    static boolean collisionDetectionIsOff() {
        return !SHA1.newInstance().getClass().getSimpleName().equals("SHA1Java");
    }

    @Override
    public ObjectInserter newObjectInserter() {
        ObjectInserter inserter = super.newObjectInserter();
        return new ObjectInserter.Filter() {
            @Override
            protected ObjectInserter delegate() {
                return inserter;
            }

            @Override
            public PackParser newPackParser(InputStream in) throws IOException {
                PackParser parser = inserter.newPackParser(in);
                CollisionCheck check = CollisionCheck.start(executor);
                if (check != null && swapHasher(parser, check.hasher())) {
                    checks.add(check);
                } else if (check != null) {
                    check.abandon();
                }
                return parser;
            }
        };
    }

    private static boolean swapHasher(PackParser parser, SHA1 hasher) {
        try {
            Field field = PackParser.class.getDeclaredField(HASHER_FIELD);
            field.setAccessible(true);
            field.set(parser, hasher);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn(
                    "JGit's pack parser keeps its own SHA-1 (collision detection on the receiving thread): {}",
                    e.toString());
            return false;
        }
    }

    /** Waits for the checks of every pack received so far; throws naming an object that failed. */
    @SuppressWarnings("ModifyCollectionInEnhancedForLoop") // a CopyOnWriteArrayList: the loop sees a snapshot
    void awaitCollisionCheck() throws IOException {
        for (CollisionCheck check : checks) {
            String problem;
            try {
                problem = check.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException(
                        "interrupted while checking received objects for SHA-1 collisions");
            }
            checks.remove(check);
            objectsChecked.addAndGet(check.objectsChecked());
            if (problem != null) {
                throw new CorruptObjectException(problem);
            }
        }
    }

    /** How many received objects passed the collision check so far. */
    long objectsChecked() {
        return objectsChecked.get();
    }

    @Override
    public void close() {
        super.close();
        for (CollisionCheck check : checks) {
            check.abandon();
        }
        checks.clear();
    }
}
