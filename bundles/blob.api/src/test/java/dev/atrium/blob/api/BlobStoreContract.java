package dev.atrium.blob.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link BlobStore} does, whatever keeps the bytes. An implementation's test extends this class and gives
 * {@link #store()}; it may add what it left behind to {@link #assertNothingLeftBehind()}. Each test uses namespaces of
 * its own, so one store can serve the whole suite.
 *
 * <p>The 64 MiB test proves streaming only in a JVM whose heap cannot hold the blob: run the suite with {@code -Xmx}
 * below 64 MiB (it fails otherwise, saying so).
 */
public abstract class BlobStoreContract {

    private static final long MiB = 1024 * 1024;

    /** The store under test. */
    protected abstract BlobStore store() throws Exception;

    /**
     * Fails if the store left anything of a failed or finished put behind (temp files, incomplete uploads). Called
     * after the tests whose puts fail; the default checks nothing more than the listing.
     */
    protected void assertNothingLeftBehind() throws Exception {}

    /** A namespace no other test (or earlier run against the same store) uses. */
    protected String ns;

    @BeforeEach
    void freshNamespace() {
        ns = "c" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
    }

    @Test
    void aPutBlobStatsAndReadsBackWithItsSha256() throws Exception {
        byte[] bytes = random(100_000, 1);
        Instant before = Instant.now().minusSeconds(2);
        Blob blob = store().put(ns, new ByteArrayInputStream(bytes), 1 * MiB);
        assertEquals(ns + "/" + sha256(bytes), blob.key());
        assertEquals(sha256(bytes), blob.sha256());
        assertEquals(bytes.length, blob.size());
        assertNotNull(blob.created());
        assertFalse(blob.created().isBefore(before), blob.created() + " is before the put");
        assertFalse(blob.created().isAfter(Instant.now().plusSeconds(2)), blob.created() + " is in the future");

        Blob stat = store().stat(blob.key());
        assertEquals(blob, stat);
        assertTrue(store().exists(blob.key()));
        try (InputStream in = store().open(blob.key())) {
            assertArrayEquals(bytes, in.readAllBytes());
        }
    }

    @Test
    void anEmptyBlobIsKept() throws Exception {
        Blob blob = store().put(ns, InputStream.nullInputStream(), 0);
        assertEquals(ns + "/" + sha256(new byte[0]), blob.key());
        assertEquals(0, blob.size());
        try (InputStream in = store().open(blob.key())) {
            assertEquals(0, in.readAllBytes().length);
        }
        try (InputStream in = store().open(blob.key(), 0, 0)) {
            assertEquals(0, in.readAllBytes().length);
        }
    }

    @Test
    void theSameBytesGetTheSameKeyAndAreKeptOnce() throws Exception {
        byte[] bytes = random(10_000, 2);
        Blob first = store().put(ns, new ByteArrayInputStream(bytes), 10_000);
        Blob second = store().put(ns, new ByteArrayInputStream(bytes), 10_000);
        assertEquals(first.key(), second.key());
        assertEquals(List.of(first.key()), keys(ns + "/"));
        Blob elsewhere = store().put(ns + "-other", new ByteArrayInputStream(bytes), 10_000);
        assertNotEquals(first.key(), elsewhere.key(), "another namespace keeps its own copy");
        assertEquals(first.sha256(), elsewhere.sha256());
    }

    @Test
    void rangesReturnExactlyTheBytesAskedFor() throws Exception {
        byte[] bytes = random(1000, 3);
        String key = store().put(ns, new ByteArrayInputStream(bytes), 1000).key();
        assertRange(key, bytes, 0, 10);
        assertRange(key, bytes, 500, 100);
        assertRange(key, bytes, 990, 10);
        assertRange(key, bytes, 0, 1000);
        assertRange(key, bytes, 1000, 0);
        assertRange(key, bytes, 0, 0);
        assertRange(key, bytes, 437, 0);
        try (InputStream in = store().open(key, 990, -1)) {
            assertArrayEquals(slice(bytes, 990, 10), in.readAllBytes(), "to the end");
        }
        try (InputStream in = store().open(key, 1000, -1)) {
            assertEquals(0, in.readAllBytes().length, "from the end to the end");
        }
    }

    @Test
    void rangesOutsideTheBlobAreRefused() throws Exception {
        String key =
                store().put(ns, new ByteArrayInputStream(random(1000, 4)), 1000).key();
        long[][] bad = {
            {1001, 0}, {1001, -1}, {-1, 5}, {990, 11}, {0, 1001}, {0, -2}, {Long.MAX_VALUE, 1}, {5, Long.MAX_VALUE}
        };
        for (long[] range : bad) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> store().open(key, range[0], range[1]).close(),
                    () -> "offset " + range[0] + " length " + range[1]);
        }
    }

    @Test
    void moreBytesThanTheLimitAreRefusedAndNothingIsKept() throws Exception {
        byte[] bytes = random(1001, 5);
        BlobTooLargeException refused =
                assertThrows(BlobTooLargeException.class, () -> store().put(ns, new ByteArrayInputStream(bytes), 1000));
        assertEquals(1000, refused.limit());
        assertEquals(List.of(), keys(ns));
        assertNull(store().stat(ns + "/" + sha256(bytes)));
        assertNothingLeftBehind();

        Blob exact = store().put(ns, new ByteArrayInputStream(bytes), 1001);
        assertEquals(1001, exact.size(), "exactly the limit is accepted");
    }

    @Test
    void aStreamFailingMidwayLeavesNothing() throws Exception {
        assertAFailingClientLeavesNothing(new ByteArrayInputStream(random(300_000, 6)));
    }

    /** A store that keeps files gives a blob's own, read-only file; one that does not gives none, and never fails for it. */
    @Test
    void aBlobsFileHoldsExactlyItsBytesAndOutlivesADelete() throws Exception {
        byte[] bytes = random(300_000, 12);
        String key = store().put(ns, new ByteArrayInputStream(bytes), 1 * MiB).key();
        Optional<FileChannel> opened = store().openFile(key);
        if (opened.isEmpty()) {
            assertTrue(
                    store().openFile(ns + "/" + sha256(new byte[3])).isEmpty(),
                    "a store without files has none for any key");
            return;
        }
        try (FileChannel file = opened.get()) {
            assertEquals(bytes.length, file.size());
            assertThrows(
                    java.nio.channels.NonWritableChannelException.class,
                    () -> file.write(ByteBuffer.wrap(new byte[1]), 0));
            assertTrue(store().delete(key));
            ByteBuffer all = ByteBuffer.allocate(bytes.length + 1);
            while (file.read(all, all.position()) > 0) {
                // to the end
            }
            assertEquals(bytes.length, all.position(), "the open file still holds all its bytes after the delete");
            assertArrayEquals(bytes, java.util.Arrays.copyOf(all.array(), bytes.length));
            ByteBuffer mapped = file.map(FileChannel.MapMode.READ_ONLY, 1000, 5000);
            byte[] part = new byte[5000];
            mapped.get(part);
            assertArrayEquals(slice(bytes, 1000, 5000), part);
        }
        assertThrows(NoSuchBlobException.class, () -> close(store().openFile(key)));
        for (String bad : List.of("", ns, "../" + key, "/etc/passwd", ".tmp/" + sha256(bytes))) {
            assertThrows(NoSuchBlobException.class, () -> close(store().openFile(bad)), bad);
        }
    }

    @Test
    void aDeletedBlobIsGone() throws Exception {
        byte[] bytes = random(5000, 7);
        String key = store().put(ns, new ByteArrayInputStream(bytes), 5000).key();
        assertTrue(store().delete(key));
        assertNull(store().stat(key));
        assertFalse(store().exists(key));
        assertThrows(NoSuchBlobException.class, () -> store().open(key).close());
        assertFalse(store().delete(key), "a second delete finds nothing");
        assertEquals(List.of(), keys(ns));

        String again = store().put(ns, new ByteArrayInputStream(bytes), 5000).key();
        assertEquals(key, again);
        try (InputStream in = store().open(again)) {
            assertArrayEquals(bytes, in.readAllBytes(), "the same bytes can be put again after a delete");
        }
    }

    @Test
    void listingByPrefixGivesKeysInKeyOrder() throws Exception {
        // '-' < '.' < '/' < '0': the keys of "x-b" sort before those of "x", whose sort before "x0"'s
        List<String> namespaces = List.of(ns, ns + "-b", ns + ".b", ns + "0", ns + "_");
        List<String> all = new ArrayList<>();
        int seed = 100;
        for (String namespace : namespaces) {
            for (int i = 0; i < 6; i++) {
                all.add(store().put(namespace, new ByteArrayInputStream(random(100 + i, seed++)), 1000)
                        .key());
            }
        }
        List<String> sorted = all.stream().sorted().toList();
        assertEquals(sorted, keys(ns), "every namespace starting with the prefix, in key order");
        assertEquals(sorted.stream().filter(k -> k.startsWith(ns + "/")).toList(), keys(ns + "/"));
        String one =
                sorted.stream().filter(k -> k.startsWith(ns + "/")).findFirst().orElseThrow();
        String narrow = one.substring(0, ns.length() + 2);
        assertEquals(
                sorted.stream().filter(k -> k.startsWith(narrow)).toList(), keys(narrow), "a prefix into the hash");
        assertEquals(List.of(one), keys(one), "a whole key");
        assertEquals(List.of(), keys(ns + "/zz"));
        assertEquals(List.of(), keys(ns + "nothing"));

        try (Stream<Blob> listed = store().list(ns + "/")) {
            for (Blob blob : listed.toList()) {
                assertEquals(store().stat(blob.key()), blob, "a listed blob is what stat says");
            }
        }
    }

    @Test
    void malformedNamespacesAreRefused() throws Exception {
        List<String> bad = new ArrayList<>(List.of(
                "",
                ".",
                "..",
                "a/b",
                "../x",
                "/abs",
                "a b",
                "ns\u0000",
                "über",
                "a\\b",
                ".tmp",
                "-x",
                "x".repeat(129)));
        for (String namespace : bad) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> store().put(namespace, new ByteArrayInputStream(new byte[1]), 10),
                    () -> "namespace '" + namespace + "'");
        }
        assertThrows(
                IllegalArgumentException.class, () -> store().put(null, new ByteArrayInputStream(new byte[1]), 10));
        String longest = "x".repeat(127) + ns.substring(0, 1);
        assertEquals(
                longest + "/" + sha256(new byte[1]),
                store().put(longest, new ByteArrayInputStream(new byte[1]), 10).key());
        store().delete(longest + "/" + sha256(new byte[1]));
    }

    @Test
    void malformedKeysFindNothing() throws Exception {
        byte[] bytes = random(100, 8);
        Blob blob = store().put(ns, new ByteArrayInputStream(bytes), 100);
        String hash = blob.sha256();
        List<String> bad = List.of(
                "",
                ns,
                ns + "/",
                hash,
                "/" + blob.key(),
                "../" + blob.key(),
                ns + "/../" + blob.key(),
                "./" + blob.key(),
                blob.key() + "/",
                blob.key() + "/x",
                ns + "/" + hash.toUpperCase(),
                ns + "/" + hash.substring(1),
                "/etc/passwd",
                "../../../../etc/passwd",
                ns + "/" + hash.substring(0, 2) + "/" + hash.substring(2, 4) + "/" + hash,
                ns + "//" + hash,
                ".tmp/" + hash);
        for (String key : bad) {
            assertNull(store().stat(key), key);
            assertFalse(store().exists(key), key);
            assertThrows(NoSuchBlobException.class, () -> store().open(key).close(), key);
            assertFalse(store().delete(key), key);
        }
        assertNull(store().stat(null));
        assertEquals(blob, store().stat(blob.key()), "nothing was deleted by a malformed key");
    }

    @Test
    void concurrentPutsOfTheSameBytesKeepOneBlob() throws Exception {
        byte[] bytes = random((int) MiB, 9);
        int writers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Blob>> puts = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                puts.add(pool.submit(() -> {
                    start.await();
                    return store().put(ns, new ByteArrayInputStream(bytes), MiB);
                }));
            }
            start.countDown();
            Set<String> keys = new HashSet<>();
            for (Future<Blob> put : puts) {
                keys.add(put.get().key());
            }
            assertEquals(Set.of(ns + "/" + sha256(bytes)), keys);
        } finally {
            pool.shutdownNow();
        }
        assertEquals(List.of(ns + "/" + sha256(bytes)), keys(ns));
        try (InputStream in = store().open(ns + "/" + sha256(bytes))) {
            assertArrayEquals(bytes, in.readAllBytes());
        }
        assertNothingLeftBehind();
    }

    /** Puts of several MiB (which a store may read, hash and write on threads of its own) fail as small ones do. */
    @Test
    void largeStreamsPastTheLimitOrFailingMidwayLeaveNothing() throws Exception {
        BlobTooLargeException refused = assertThrows(
                BlobTooLargeException.class, () -> store().put(ns, new Generated(6 * MiB + 3, 21), 6 * MiB));
        assertEquals(6 * MiB, refused.limit());
        assertAFailingClientLeavesNothing(new Generated(5 * MiB + MiB / 2, 22));
    }

    /** Concurrent puts of several MiB each keep their own bytes: nothing a store reuses between puts is shared. */
    @Test
    void concurrentLargePutsKeepEachItsOwnBytes() throws Exception {
        int writers = 3;
        int rounds = 3;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<List<String>>> puts = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                puts.add(pool.submit(() -> {
                    start.await();
                    List<String> mismatches = new ArrayList<>();
                    for (int r = 0; r < rounds; r++) {
                        long size = 3 * MiB + 4097L * (writer * rounds + r);
                        long seed = 100 + writer * rounds + r;
                        String expected = HexFormat.of().formatHex(digest(new Generated(size, seed)));
                        Blob blob = store().put(ns, new Generated(size, seed), size);
                        String read;
                        try (InputStream in = store().open(blob.key())) {
                            read = HexFormat.of().formatHex(digest(in));
                        }
                        if (!blob.key().equals(ns + "/" + expected) || blob.size() != size || !read.equals(expected)) {
                            mismatches.add("put " + seed + ": key " + blob.key() + ", size " + blob.size()
                                    + ", read back " + read);
                        }
                    }
                    return mismatches;
                }));
            }
            start.countDown();
            List<String> mismatches = new ArrayList<>();
            for (Future<List<String>> put : puts) {
                mismatches.addAll(put.get());
            }
            assertEquals(List.of(), mismatches);
        } finally {
            pool.shutdownNow();
        }
        assertEquals(writers * rounds, keys(ns).size());
        assertNothingLeftBehind();
    }

    @Test
    void a64MiBBlobIsStreamedNotHeldInMemory() throws Exception {
        long size = 64 * MiB;
        assertTrue(
                Runtime.getRuntime().maxMemory() < size,
                "run the contract with -Xmx below 64m, so that a store that "
                        + "buffered the blob in the heap fails; the heap here is "
                        + Runtime.getRuntime().maxMemory() / MiB + " MiB");
        String expected = HexFormat.of().formatHex(digest(new Generated(size, 10)));
        long started = System.nanoTime();
        Blob blob = store().put(ns, new Generated(size, 10), size);
        Duration put = Duration.ofNanos(System.nanoTime() - started);
        assertEquals(expected, blob.sha256());
        assertEquals(size, blob.size());
        started = System.nanoTime();
        try (InputStream in = store().open(blob.key())) {
            assertEquals(expected, HexFormat.of().formatHex(digest(in)));
        }
        Duration read = Duration.ofNanos(System.nanoTime() - started);
        try (InputStream in = store().open(blob.key(), size - 10, -1)) {
            byte[] tail = in.readAllBytes();
            assertEquals(10, tail.length);
        }
        System.out.printf(
                "%s: 64 MiB put in %d ms, read in %d ms%n",
                getClass().getSimpleName(), put.toMillis(), read.toMillis());
    }

    private static void close(Optional<FileChannel> file) throws IOException {
        if (file.isPresent()) {
            file.get().close();
        }
    }

    private void assertRange(String key, byte[] bytes, int offset, int length) throws Exception {
        try (InputStream in = store().open(key, offset, length)) {
            assertArrayEquals(
                    slice(bytes, offset, length), in.readAllBytes(), "offset " + offset + " length " + length);
        }
    }

    /** The keys listed under {@code prefix}, in the order listed. */
    protected List<String> keys(String prefix) throws Exception {
        try (Stream<Blob> listed = store().list(prefix)) {
            return listed.map(Blob::key).toList();
        }
    }

    private static byte[] slice(byte[] bytes, int offset, int length) {
        byte[] out = new byte[length];
        System.arraycopy(bytes, offset, out, 0, length);
        return out;
    }

    protected static byte[] random(int size, long seed) {
        byte[] out = new byte[size];
        new Random(seed).nextBytes(out);
        return out;
    }

    protected static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(sha().digest(bytes));
    }

    private static byte[] digest(InputStream in) throws IOException {
        MessageDigest sha = sha();
        byte[] buffer = new byte[64 * 1024];
        for (int n; (n = in.read(buffer)) != -1; ) {
            sha.update(buffer, 0, n);
        }
        return sha.digest();
    }

    private static MessageDigest sha() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code size} pseudo-random bytes made as they are read: nothing of the blob exists in memory at once. */
    public static final class Generated extends InputStream {
        private final Random random;
        private final byte[] block = new byte[8192];
        private long remaining;
        private int at = block.length;

        public Generated(long size, long seed) {
            this.remaining = size;
            this.random = new Random(seed);
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (remaining <= 0) {
                return -1;
            }
            if (at == block.length) {
                random.nextBytes(block);
                at = 0;
            }
            int n = (int) Math.min(Math.min(len, block.length - at), remaining);
            System.arraycopy(block, at, b, off, n);
            at += n;
            remaining -= n;
            return n;
        }
    }

    /** A put whose client goes away after {@code head}'s bytes fails with an I/O error and leaves nothing behind. */
    private void assertAFailingClientLeavesNothing(InputStream head) throws Exception {
        InputStream failing = new InputStream() {
            @Override
            public int read() throws IOException {
                int b = head.read();
                if (b < 0) {
                    throw new IOException("the client went away");
                }
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = head.read(b, off, len);
                if (n < 0) {
                    throw new IOException("the client went away");
                }
                return n;
            }
        };
        IOException e = assertThrows(IOException.class, () -> store().put(ns, failing, 10 * MiB));
        assertFalse(e instanceof BlobTooLargeException, e.toString());
        assertEquals(List.of(), keys(ns));
        assertNothingLeftBehind();
    }
}
