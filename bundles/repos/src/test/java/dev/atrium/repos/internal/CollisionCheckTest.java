package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.internal.storage.file.FileRepository;
import org.eclipse.jgit.internal.storage.pack.PackWriter;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.NullProgressMonitor;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.TreeFormatter;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.PackParser;
import org.eclipse.jgit.util.sha1.SHA1;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CollisionCheckTest {

    private static final byte[] SHATTERED_PREFIX = DetectingSha1Test.SHATTERED_PREFIX;

    private final ExecutorService executor = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    @Test
    void theShatteredCollisionIsRefusedThoughTheParserHashesWithTheJdk() throws Exception {
        CollisionCheck check = CollisionCheck.start(executor);
        SHA1 hasher = check.hasher();
        hasher.reset();
        // in the pieces a parser hands over: single bytes, slices of a reused buffer
        hasher.update(SHATTERED_PREFIX[0]);
        hasher.update(SHATTERED_PREFIX, 1, 99);
        hasher.update(SHATTERED_PREFIX, 100, SHATTERED_PREFIX.length - 100);
        byte[] id = hasher.digest();
        assertArrayEquals(
                MessageDigest.getInstance("SHA-1").digest(SHATTERED_PREFIX),
                id,
                "the parser still gets the plain SHA-1");
        String problem = check.await();
        assertNotNull(problem);
        assertTrue(problem.contains("collision attack"), problem);
    }

    @Test
    void anAttackAmongThousandsOfSmallObjectsIsStillFound() throws Exception {
        // objects travel to the workers in batches; the attack in the middle of one must still be checked
        CollisionCheck check = CollisionCheck.start(executor);
        SHA1 hasher = check.hasher();
        Random random = new Random(11);
        for (int i = 0; i < 5_001; i++) {
            hasher.reset();
            if (i == 2_500) {
                hasher.update(SHATTERED_PREFIX);
            } else {
                byte[] data = new byte[random.nextInt(400)];
                random.nextBytes(data);
                hasher.update(data);
            }
            hasher.digest();
        }
        String problem = check.await();
        assertNotNull(problem);
        assertTrue(problem.contains("collision attack"), problem);
    }

    @Test
    void objectsAreSpreadOverEveryWorker() throws Exception {
        // the batches take turns among the workers; were they all to go to one, detection would use a single core
        CollisionCheck check = CollisionCheck.start(executor, 2);
        SHA1 hasher = check.hasher();
        Random random = new Random(5);
        for (int i = 0; i < 4_000; i++) {
            byte[] data = new byte[100 + random.nextInt(2_000)];
            random.nextBytes(data);
            hasher.reset();
            hasher.update(data);
            hasher.digest();
        }
        assertNull(check.await());
        long[] perWorker = check.objectsCheckedPerWorker();
        assertEquals(4_000, perWorker[0] + perWorker[1]);
        assertTrue(perWorker[0] > 1_000 && perWorker[1] > 1_000, java.util.Arrays.toString(perWorker));
    }

    @Test
    void ordinaryObjectsPassWhateverPiecesTheyArriveIn() throws Exception {
        CollisionCheck check = CollisionCheck.start(executor);
        SHA1 hasher = check.hasher();
        Random random = new Random(7);
        MessageDigest jdk = MessageDigest.getInstance("SHA-1");
        for (int i = 0; i < 200; i++) {
            byte[] data = new byte[random.nextInt(i % 10 == 0 ? 300_000 : 3_000)];
            random.nextBytes(data);
            byte[] header = Constants.encodedTypeString(Constants.OBJ_BLOB);
            hasher.reset();
            hasher.update(header);
            hasher.update((byte) ' ');
            hasher.update(Constants.encodeASCII(data.length));
            hasher.update((byte) 0);
            int p = 0;
            while (p < data.length) {
                int n = Math.min(data.length - p, 1 + random.nextInt(20_000));
                hasher.update(data, p, n);
                p += n;
            }
            jdk.update(header);
            jdk.update((byte) ' ');
            jdk.update(Constants.encodeASCII(data.length));
            jdk.update((byte) 0);
            assertArrayEquals(jdk.digest(data), hasher.digest());
        }
        assertNull(check.await());
        assertEquals(200, check.objectsChecked());
    }

    @Test
    void bytesChangedAfterTheyWereHandedOverRefuseThePushRatherThanPassUnchecked() throws Exception {
        // the workers start only after the bytes changed, so they certainly hash the changed ones
        List<Runnable> held = new ArrayList<>();
        CollisionCheck check = CollisionCheck.start(held::add, 2);
        SHA1 hasher = check.hasher();
        byte[] whole = new byte[1 << 20];
        hasher.reset();
        hasher.update(whole);
        whole[12345] = 1;
        hasher.digest();
        held.forEach(executor::execute);
        String problem = check.await();
        assertNotNull(problem, "the detecting hash saw different bytes, so the objects must not pass");
    }

    @Test
    void everyObjectOfAReceivedPackIsChecked(@TempDir Path dir) throws Exception {
        // a source repository with commits, trees and blobs large and small
        Path source = dir.resolve("source.git");
        Set<ObjectId> want;
        int objects;
        ByteArrayOutputStream pack = new ByteArrayOutputStream();
        try (FileRepository src = (FileRepository)
                new FileRepositoryBuilder().setGitDir(source.toFile()).build()) {
            src.create(true);
            ObjectId commit = null;
            Random random = new Random(1);
            try (ObjectInserter ins = src.newObjectInserter()) {
                for (int c = 0; c < 20; c++) {
                    TreeFormatter tree = new TreeFormatter();
                    for (int f = 0; f < 5; f++) {
                        byte[] blob = new byte[f == 0 ? 200_000 : 100 + random.nextInt(5_000)];
                        random.nextBytes(blob);
                        tree.append("f" + f, FileMode.REGULAR_FILE, ins.insert(Constants.OBJ_BLOB, blob));
                    }
                    CommitBuilder cb = new CommitBuilder();
                    cb.setTreeId(ins.insert(tree));
                    if (commit != null) {
                        cb.setParentId(commit);
                    }
                    PersonIdent who = new PersonIdent("a", "a@example.org");
                    cb.setAuthor(who);
                    cb.setCommitter(who);
                    cb.setMessage("c" + c);
                    commit = ins.insert(cb);
                }
                ins.flush();
            }
            want = Set.of(commit);
            try (PackWriter writer = new PackWriter(src)) {
                writer.preparePack(NullProgressMonitor.INSTANCE, want, Set.of());
                objects = (int) writer.getObjectCount();
                writer.writePack(NullProgressMonitor.INSTANCE, NullProgressMonitor.INSTANCE, pack);
            }
        }
        Path target = dir.resolve("target.git");
        new FileRepositoryBuilder().setGitDir(target.toFile()).build().create(true);
        try (FileRepository received = PushRepository.open(target.toFile(), executor)) {
            assertTrue(received instanceof PushRepository, "JGit detects with its own Java SHA-1 by default");
            try (ObjectInserter ins = received.newObjectInserter()) {
                PackParser parser = ins.newPackParser(new ByteArrayInputStream(pack.toByteArray()));
                parser.parse(NullProgressMonitor.INSTANCE);
                ins.flush();
            }
            ((PushRepository) received).awaitCollisionCheck();
            assertEquals(objects, ((PushRepository) received).objectsChecked());
            assertTrue(received.getObjectDatabase().has(want.iterator().next()));
        }
        assertTrue(Files.isDirectory(target.resolve("objects/pack")));
    }

    @Test
    void aCheckThatFailsRefusesThroughTheRepository(@TempDir Path dir) throws Exception {
        Path target = dir.resolve("t.git");
        new FileRepositoryBuilder().setGitDir(target.toFile()).build().create(true);
        try (FileRepository received = PushRepository.open(target.toFile(), executor)) {
            // a pack whose only blob is the shattered prefix hashed raw cannot be built; drive the hasher a parser got
            try (ObjectInserter ins = received.newObjectInserter()) {
                PackParser parser = ins.newPackParser(new ByteArrayInputStream(new byte[0]));
                java.lang.reflect.Field f = PackParser.class.getDeclaredField("objectHasher");
                f.setAccessible(true);
                SHA1 hasher = (SHA1) f.get(parser);
                hasher.reset();
                hasher.update(SHATTERED_PREFIX);
                hasher.digest();
            }
            CorruptObjectException e =
                    assertThrows(CorruptObjectException.class, ((PushRepository) received)::awaitCollisionCheck);
            assertTrue(e.getMessage().contains("collision attack"), e.getMessage());
        }
    }
}
