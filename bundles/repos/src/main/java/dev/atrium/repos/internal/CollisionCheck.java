package dev.atrium.repos.internal;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import org.eclipse.jgit.lib.MutableObjectId;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.util.sha1.SHA1;

/**
 * SHA-1 collision detection for the objects of one received pack, run beside the parse. The parser hashes with the
 * JDK's SHA-1 through {@link #hasher()}, which hands every byte it hashes to threads of its own (one per processor,
 * each taking batches of whole objects in turn) that run {@link DetectingSha1}, git's collision-detecting SHA-1
 * (sha1dc), over the same bytes. Detection then costs the push other cores rather than its wall time (sha1dc in Java
 * is several times slower than the JDK's SHA-1 with the CPU's SHA instructions). Objects go over in batches of about
 * {@value #BATCH_BYTES} bytes, not one by one: a push has hundreds of thousands of small objects, and waking a
 * worker for each cost the receiving thread about as much as the JDK's hashing. The detecting hash of each object
 * must also equal the JDK's: anything else (a bug, bytes changed under the check) refuses the push like an attack, so
 * a fault here can only refuse, never let an attack through.
 */
final class CollisionCheck {

    /** Bytes the parse may run ahead of the check before it waits; bounds the memory the check holds. */
    private static final int BUDGET_KIB = 64 * 1024;
    /**
     * Arrays longer than this are handed over without a copy: PackParser passes whole inflated objects (never written
     * to again) and reuses only its 8 KiB buffers, which are copied. Were that ever to change, the digests would
     * differ and the push be refused.
     */
    private static final int SHARE_ABOVE = 64 * 1024;
    /**
     * A batch goes to its worker at the start of an object once it holds this many bytes or {@link #BATCH_ITEMS}
     * items, and the next batch to the next worker; within an object only at {@link #BATCH_LIMIT_BYTES} (a large
     * object goes over in pieces, all to the same worker) or at the end of the pack.
     */
    private static final int BATCH_BYTES = 64 * 1024;

    private static final int BATCH_ITEMS = 512;
    private static final int BATCH_LIMIT_BYTES = 1024 * 1024;

    private static final Object BEGIN = new Object();
    private static final Object FINISH = new Object();

    private record Chunk(byte[] bytes, int offset, int length, int permits) {}

    private record End(byte[] id) {}

    private final Semaphore budget = new Semaphore(BUDGET_KIB);
    /** Objects are independent: each goes whole to one worker, in turn, so the check uses every core it can get. */
    private final Worker[] workers;

    private final List<Tee> hashers = new CopyOnWriteArrayList<>();
    private volatile String problem;
    private volatile boolean abandoned;

    private CollisionCheck(int workers) {
        this.workers = new Worker[workers];
        for (int i = 0; i < workers; i++) {
            this.workers[i] = new Worker();
        }
    }

    /** Starts a check on {@code executor} with {@code workers} threads; null when it cannot run there (the bundle is stopping). */
    static CollisionCheck start(Executor executor, int workers) {
        CollisionCheck check = new CollisionCheck(Math.max(1, workers));
        int started = 0;
        try {
            for (Worker w : check.workers) {
                executor.execute(w);
                started++;
            }
            return check;
        } catch (RejectedExecutionException e) {
            for (int i = 0; i < started; i++) {
                check.workers[i].queue.add(FINISH);
            }
            return null;
        }
    }

    /** Starts a check with one worker per processor. */
    static CollisionCheck start(Executor executor) {
        return start(executor, Runtime.getRuntime().availableProcessors());
    }

    /** The hasher the pack parser uses in place of its own. */
    SHA1 hasher() {
        Tee tee = new Tee();
        hashers.add(tee);
        return tee;
    }

    /**
     * Waits until every object handed over so far is checked.
     *
     * @return what was wrong (an attack, or a check that could not finish), or null when every object passed
     */
    String await() throws InterruptedException {
        for (Tee tee : hashers) {
            tee.handOver();
        }
        for (Worker w : workers) {
            w.queue.add(FINISH);
        }
        for (Worker w : workers) {
            w.done.await();
        }
        return problem;
    }

    /** Stops the check without waiting for it (the transfer failed or was abandoned). */
    void abandon() {
        abandoned = true;
        for (Worker w : workers) {
            w.queue.add(FINISH);
        }
    }

    /** How many objects each worker checked so far, in the order of the workers. */
    long[] objectsCheckedPerWorker() {
        long[] counts = new long[workers.length];
        for (int i = 0; i < workers.length; i++) {
            counts[i] = workers[i].objects;
        }
        return counts;
    }

    long objectsChecked() {
        long n = 0;
        for (Worker w : workers) {
            n += w.objects;
        }
        return n;
    }

    /** One thread's share: batches of whole objects, in the order they arrive. */
    private final class Worker implements Runnable {
        private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile long objects;

        @Override
        public void run() {
            try {
                DetectingSha1 detecting = new DetectingSha1();
                for (; ; ) {
                    Object next = queue.take();
                    if (next == FINISH) {
                        return;
                    }
                    int permits = 0;
                    for (Object item : (List<?>) next) {
                        check(detecting, item);
                        if (item instanceof Chunk c) {
                            permits += c.permits();
                        }
                    }
                    // once per batch: each release wakes a parse waiting for budget
                    budget.release(permits);
                }
            } catch (InterruptedException e) {
                problem = "the SHA-1 collision check was interrupted";
                Thread.currentThread().interrupt();
            } catch (RuntimeException | Error e) {
                problem = "the SHA-1 collision check failed: " + e;
            } finally {
                // a parse still running must not wait for budget the check will never release
                budget.release(BUDGET_KIB);
                done.countDown();
            }
        }

        @SuppressWarnings("NonAtomicVolatileUpdate") // one writer, this worker; others only read
        private void check(DetectingSha1 detecting, Object item) {
            if (abandoned || problem != null) {
                return;
            }
            if (item == BEGIN) {
                detecting.reset();
            } else if (item instanceof Chunk c) {
                detecting.update(c.bytes(), c.offset(), c.length());
            } else if (item instanceof End e) {
                objects++;
                byte[] digest = detecting.digest();
                if (detecting.collisionDetected()) {
                    problem = "object " + ObjectId.fromRaw(e.id()).name() + " is a SHA-1 collision attack";
                } else if (!Arrays.equals(digest, e.id())) {
                    problem = "the collision-detecting SHA-1 of object "
                            + ObjectId.fromRaw(e.id()).name() + " differs from its id";
                }
            }
        }
    }

    /**
     * The JDK's SHA-1 for the parser, each byte also queued for the detecting hash. The parser's thread calls it;
     * {@link #handOver()} may also come from the thread awaiting the check, hence the locking (never contended
     * during the parse).
     */
    private final class Tee extends SHA1 {
        private final MessageDigest jdk;
        private final byte[] small = new byte[256];
        private int smallCount;
        private int next;
        private Worker current = workers[0];
        /** Items not yet handed to {@link #current}; objects stay whole within one worker's queue. */
        private List<Object> batch = new ArrayList<>();

        private int batchBytes;

        Tee() {
            try {
                jdk = MessageDigest.getInstance("SHA-1");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("the JDK has no SHA-1", e);
            }
        }

        @Override
        public void update(byte b) {
            jdk.update(b);
            if (smallCount == small.length) {
                flushSmall();
            }
            small[smallCount++] = b;
        }

        @Override
        public void update(byte[] in) {
            update(in, 0, in.length);
        }

        @Override
        public void update(byte[] in, int p, int len) {
            jdk.update(in, p, len);
            if (len <= small.length - smallCount) {
                System.arraycopy(in, p, small, smallCount, len);
                smallCount += len;
                return;
            }
            flushSmall();
            if (in.length > SHARE_ABOVE) {
                hand(in, p, len);
            } else {
                hand(Arrays.copyOfRange(in, p, p + len), 0, len);
            }
        }

        private void flushSmall() {
            if (smallCount > 0) {
                hand(Arrays.copyOf(small, smallCount), 0, smallCount);
                smallCount = 0;
            }
        }

        private void hand(byte[] bytes, int offset, int length) {
            int permits = Math.min(BUDGET_KIB, 1 + length / 1024);
            // a batch goes over long before it holds much of the budget: this never waits for permits only it would
            // free
            budget.acquireUninterruptibly(permits);
            add(new Chunk(bytes, offset, length, permits), length);
        }

        private synchronized void add(Object item, int bytes) {
            batch.add(item);
            batchBytes += bytes;
            if (batchBytes >= BATCH_LIMIT_BYTES || batch.size() >= 4 * BATCH_ITEMS) {
                // the same worker goes on with the object in the next batch
                handOver();
            }
        }

        /** Hands what is batched to the current worker. */
        synchronized void handOver() {
            if (!batch.isEmpty()) {
                current.queue.add(batch);
                batch = new ArrayList<>();
                batchBytes = 0;
            }
        }

        @Override
        public byte[] digest() {
            flushSmall();
            byte[] id = jdk.digest();
            add(new End(id), 0);
            return id.clone();
        }

        @Override
        public ObjectId toObjectId() {
            return ObjectId.fromRaw(digest());
        }

        @Override
        public void digest(MutableObjectId id) {
            id.fromRaw(digest());
        }

        @Override
        public SHA1 reset() {
            jdk.reset();
            smallCount = 0;
            nextObject();
            return this;
        }

        /** Starts an object, the first of a new batch for the next worker once the batch in hand is big enough. */
        private synchronized void nextObject() {
            if (batchBytes >= BATCH_BYTES || batch.size() >= BATCH_ITEMS) {
                handOver();
            }
            if (batch.isEmpty()) {
                current = workers[next];
                next = (next + 1) % workers.length;
            }
            batch.add(BEGIN);
        }

        @Override
        public SHA1 setDetectCollision(boolean detect) {
            return this;
        }

        @Override
        public boolean hasCollision() {
            return false;
        }
    }
}
