package dev.atrium.blob.fs.internal;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.blob.api.NoSuchBlobException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Blobs as files: {@code <data>/blobs/<namespace>/<ab>/<cd>/<sha256>}, where {@code ab} and {@code cd} are the first
 * two byte pairs of the hash (so no directory holds more than 256 entries before the leaves). A put streams into
 * {@code <data>/blobs/.tmp/}, hashing and counting as it goes, fsyncs the file, renames it into place and fsyncs the
 * directory: a blob is either whole under its key or absent. Temp files a crash left behind are removed at activation
 * and then periodically, once they are older than {@code staleTempSeconds} and no live writer holds them.
 *
 * <p>Why one class of about 980 lines: the put path (buffered and O_DIRECT writes, hashing, fsync, rename) and the
 * temp-file sweep share the temp directory's rules and the writers' registry; most of its length is the direct-I/O
 * path's buffer handling.
 */
// immediate: the sweep of a crash's leftovers runs at start, not when the first consumer happens to ask
@Component(
        service = BlobStore.class,
        configurationPid = "dev.atrium.blob.fs",
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        immediate = true,
        property = {BlobStore.BACKEND + "=fs", "service.ranking:Integer=0"})
@Designate(ocd = FsBlobStore.Config.class)
public final class FsBlobStore implements BlobStore {

    @ObjectClassDefinition(name = "Atrium blobs on the filesystem")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA); blobs live in its blobs/")
        String dataDirectory() default "data";

        @AttributeDefinition(
                description =
                        "Seconds after which a temp file no writer holds is taken for a crash's leftover and removed")
        long staleTempSeconds() default 300;

        @AttributeDefinition(
                description =
                        "Write blobs with O_DIRECT where the filesystem allows it (bypassing the page cache: "
                                + "no second copy of every byte, and the disk writes while the next bytes arrive); false writes through the page cache")
        boolean directWrites() default true;
    }

    static final String TEMP = ".tmp";
    private static final String PART = ".part";
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern KEY = Pattern.compile("([A-Za-z0-9][A-Za-z0-9._-]{0,127})/([0-9a-f]{64})");
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern FAN = Pattern.compile("[0-9a-f]{2}");
    /** The piece read from the caller's stream, hashed and copied at a time: small enough to stay in the CPU's cache. */
    private static final int CHUNK = 64 * 1024;
    /** One O_DIRECT write, and the array a put's content is read into; a put has at most {@link #DEPTH} arrays. */
    private static final int DIRECT_BUFFER = 1024 * 1024;
    /** Enough arrays for each of the three stages (read, hash, write) to hold one while another waits. */
    private static final int DEPTH = 8;
    /** Direct buffers of a put between its hasher and its writer. */
    private static final int WRITE_DEPTH = 3;
    /** Direct buffers and arrays kept for later puts. */
    private static final int POOLED_BUFFERS = 8;

    private static final int POOLED_ARRAYS = 16;
    /** Bytes of a mapped window of a blob being read. */
    private static final long WINDOW = 16L * 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(FsBlobStore.class);

    /**
     * Blobs hold workspaces' files: only the server's own user reads them (0600, directories 0700),
     * whatever the umask, so another local account learns neither contents nor which hashes exist.
     */
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");

    private static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");

    private final Path root;
    private final Path temp;
    /** The modes new temp files and directories are created with; empty where the filesystem has no POSIX modes. */
    private final FileAttribute<?>[] fileMode;

    private final FileAttribute<?>[] directoryMode;
    private final Duration staleTemp;
    /** The temp files this store is writing now: never taken for leftovers. */
    private final Set<Path> writing = ConcurrentHashMap.newKeySet();

    private final ScheduledExecutorService sweeper;
    /** The threads that hash and write a large put's full arrays while its caller reads the next ones. */
    private final ExecutorService workers;
    /** O_DIRECT, when this JDK and the temp directory's filesystem take it (null: write through the page cache). */
    private volatile OpenOption direct;
    /** The alignment O_DIRECT needs of buffers, lengths and file positions. */
    private final int alignment;

    private final Queue<ByteBuffer> pool = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pooled = new AtomicInteger();
    private final Queue<byte[]> arrays = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pooledArrays = new AtomicInteger();

    @Activate
    public FsBlobStore(Config config) throws IOException {
        this(
                Path.of(config.dataDirectory()).toAbsolutePath().resolve("blobs"),
                Duration.ofSeconds(Math.max(0, config.staleTempSeconds())),
                config.directWrites());
    }

    FsBlobStore(Path root, Duration staleTemp) throws IOException {
        this(root, staleTemp, true);
    }

    FsBlobStore(Path root, Duration staleTemp, boolean directWrites) throws IOException {
        this.root = root.toAbsolutePath().normalize();
        this.temp = this.root.resolve(TEMP);
        this.staleTemp = staleTemp;
        boolean posix = this.root.getFileSystem().supportedFileAttributeViews().contains("posix");
        this.fileMode = posix
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_FILE)}
                : new FileAttribute<?>[0];
        this.directoryMode = posix
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_DIRECTORY)}
                : new FileAttribute<?>[0];
        Files.createDirectories(temp, directoryMode);
        if (posix) {
            restrict(this.root);
            restrict(temp);
        }
        this.alignment = alignment(temp);
        this.direct = directWrites && alignment > 0 ? directOption() : null;
        workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "atrium-blob-fs-put");
            t.setDaemon(true);
            return t;
        });
        removeAbandonedTemps();
        sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "atrium-blob-fs-sweep");
            t.setDaemon(true);
            return t;
        });
        long period = Math.min(3600, Math.max(10, staleTemp.toSeconds()));
        var unused = sweeper.scheduleWithFixedDelay(
                () -> {
                    try {
                        removeAbandonedTemps();
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("blob temp files in {} could not be swept", temp, e);
                    }
                },
                period,
                period,
                TimeUnit.SECONDS);
    }

    @Deactivate
    void close() throws InterruptedException {
        sweeper.shutdownNow();
        workers.shutdownNow();
        sweeper.awaitTermination(10, TimeUnit.SECONDS);
        workers.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Override
    public Blob put(String namespace, InputStream content, long maxBytes) throws IOException {
        checkNamespace(namespace);
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must be 0 or more, got " + maxBytes);
        }
        Path part = temp.resolve(UUID.randomUUID() + PART);
        writing.add(part);
        try {
            MessageDigest sha = sha256();
            OpenOption directly = direct;
            FileChannel out = openTemp(part, directly);
            if (out == null) {
                directly = null;
                out = openTemp(part, null);
            }
            try (FileChannel file = out;
                    FileLock held = file.lock()) {
                if (directly != null) {
                    writeDirect(content, maxBytes, sha, file);
                } else {
                    writeBuffered(content, maxBytes, sha, file);
                }
                file.force(true);
            }
            String hash = HexFormat.of().formatHex(sha.digest());
            Path target = file(namespace, hash);
            if (!Files.exists(target)) {
                List<Path> made = makeDirectories(target.getParent());
                try {
                    Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    throw new IOException("the blob directory " + root + " cannot rename atomically", e);
                }
                syncDirectory(target.getParent());
                for (Path dir : made) {
                    syncDirectory(dir.getParent());
                }
            }
            return stat(namespace + "/" + hash, target);
        } finally {
            Files.deleteIfExists(part);
            writing.remove(part);
        }
    }

    /** Whether puts write with O_DIRECT (for tests). */
    boolean writesDirect() {
        return direct != null;
    }

    /**
     * Opens the temp file, with {@code option} (O_DIRECT) when not null; null when the filesystem refuses O_DIRECT,
     * which it then is never asked again.
     */
    private FileChannel openTemp(Path part, OpenOption option) throws IOException {
        if (option == null) {
            return FileChannel.open(part, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), fileMode);
        }
        try {
            return FileChannel.open(
                    part, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, option), fileMode);
        } catch (FileAlreadyExistsException e) {
            throw e;
        } catch (IOException | UnsupportedOperationException e) {
            // EINVAL: this filesystem (tmpfs on older kernels, some FUSE ones) does no direct I/O
            direct = null;
            Files.deleteIfExists(part);
            LOG.info("{} takes no O_DIRECT ({}); blobs are written through the page cache", temp, e.toString());
            return null;
        }
    }

    /**
     * Through the page cache, 64 KiB at a time: hashed, counted and written in one pass.
     */
    private static void writeBuffered(InputStream content, long maxBytes, MessageDigest sha, FileChannel out)
            throws IOException {
        byte[] buffer = new byte[CHUNK];
        ByteBuffer wrapped = ByteBuffer.wrap(buffer);
        long size = 0;
        for (int n; (n = content.read(buffer)) != -1; ) {
            size += n;
            if (size > maxBytes) {
                throw new BlobTooLargeException(maxBytes);
            }
            sha.update(buffer, 0, n);
            wrapped.clear().limit(n);
            while (wrapped.hasRemaining()) {
                out.write(wrapped);
            }
        }
    }

    /**
     * With O_DIRECT, in three stages on three threads, so that a large put uses both cores of a small machine: the
     * caller's thread only reads the content into arrays of 1 MiB and counts it; a full array goes to a hasher thread,
     * which hashes it (SHA-256, about half the CPU of a put) and copies it into an aligned direct buffer, and hands the
     * array back; a writer thread writes the buffer to the disk (DMA, no copy into the page cache). At most
     * {@link #DEPTH} arrays and {@link #WRITE_DEPTH} buffers per put. A put that fits in one array (most) starts no
     * thread: its caller hashes and writes it. The last, partial array is written padded to the alignment and the file
     * truncated to the real size.
     */
    private void writeDirect(InputStream content, long maxBytes, MessageDigest sha, FileChannel out)
            throws IOException {
        long size = 0;
        byte[] current = array();
        int filled = 0;
        Pipeline pipeline = null;
        try {
            for (; ; ) {
                if (filled == current.length) {
                    // only once more bytes come: a put of exactly one array starts no thread
                    if (pipeline == null) {
                        pipeline = new Pipeline(out, sha);
                    }
                    byte[] full = current;
                    // the pipeline owns it now: were it still ours when swap throws, the finally would pool it twice
                    current = null;
                    current = pipeline.swap(full);
                    filled = 0;
                }
                int n = content.read(current, filled, current.length - filled);
                if (n == -1) {
                    break;
                }
                size += n;
                if (size > maxBytes) {
                    throw new BlobTooLargeException(maxBytes);
                }
                filled += n;
            }
            if (pipeline != null) {
                pipeline.finish();
            }
            if (filled > 0) {
                sha.update(current, 0, filled);
                ByteBuffer direct = buffer();
                try {
                    direct.put(current, 0, filled).flip();
                    direct.limit((filled + alignment - 1) / alignment * alignment);
                    long at = size - filled;
                    while (direct.hasRemaining()) {
                        at += out.write(direct, at);
                    }
                } finally {
                    release(direct);
                }
                if (filled % alignment != 0) {
                    out.truncate(size);
                }
            }
        } finally {
            if (pipeline != null) {
                pipeline.stop();
            }
            releaseArray(current);
        }
    }

    /** An aligned direct buffer of {@link #DIRECT_BUFFER} bytes, from the pool when it has one. */
    private ByteBuffer buffer() {
        ByteBuffer b = pool.poll();
        if (b != null) {
            pooled.decrementAndGet();
            return b.clear();
        }
        return ByteBuffer.allocateDirect(DIRECT_BUFFER + alignment)
                .alignedSlice(alignment)
                .limit(DIRECT_BUFFER)
                .slice();
    }

    private void release(ByteBuffer b) {
        if (b == null) {
            return;
        }
        if (pooled.incrementAndGet() <= POOLED_BUFFERS) {
            pool.add(b.clear());
        } else {
            pooled.decrementAndGet();
        }
    }

    /** An array of {@link #DIRECT_BUFFER} bytes for a put's content, from the pool when it has one. */
    private byte[] array() {
        byte[] a = arrays.poll();
        if (a != null) {
            pooledArrays.decrementAndGet();
            return a;
        }
        return new byte[DIRECT_BUFFER];
    }

    private void releaseArray(byte[] a) {
        if (a == null || a.length != DIRECT_BUFFER) {
            return;
        }
        if (pooledArrays.incrementAndGet() <= POOLED_ARRAYS) {
            arrays.add(a);
        } else {
            pooledArrays.decrementAndGet();
        }
    }

    /**
     * A large put's full arrays, in order, through a hasher thread (hash, copy into a direct buffer, array handed back
     * empty) and a writer thread (the buffers, in order) of {@link #workers}. The hasher owns the digest until
     * {@link #finish} returns.
     */
    private final class Pipeline {
        private final FileChannel out;
        private final MessageDigest sha;
        private final BlockingQueue<byte[]> toHash = new ArrayBlockingQueue<>(DEPTH + 1);
        private final BlockingQueue<ByteBuffer> toWrite = new ArrayBlockingQueue<>(WRITE_DEPTH + 1);
        private final BlockingQueue<byte[]> empty = new ArrayBlockingQueue<>(DEPTH);
        private final BlockingQueue<ByteBuffer> written = new ArrayBlockingQueue<>(WRITE_DEPTH);
        private final Future<?> hashing;
        private final Future<?> writing;
        private volatile IOException failure;
        /** Arrays this put has taken, the one being filled included. */
        private int owned = 1;

        private boolean stopped;

        Pipeline(FileChannel out, MessageDigest sha) {
            this.out = out;
            this.sha = sha;
            this.hashing = workers.submit(this::hash);
            this.writing = workers.submit(this::write);
        }

        /**
         * Hashes each array and copies it into a direct buffer for the writer, a cache-sized piece at a time (the
         * copy brings the piece into this core's cache, the hash reads it there); the array goes back at once. The
         * copy is here rather than in the writer because the other core also runs the request thread and the
         * client: this one has room.
         */
        private void hash() {
            int directs = 0;
            try {
                for (; ; ) {
                    byte[] a = toHash.take();
                    if (a == END) {
                        return;
                    }
                    if (failure == null) {
                        ByteBuffer direct = written.poll();
                        if (direct == null && directs < WRITE_DEPTH) {
                            directs++;
                            direct = buffer();
                        } else if (direct == null) {
                            direct = written.take();
                        }
                        direct.clear();
                        for (int off = 0; off < a.length; off += CHUNK) {
                            int n = Math.min(CHUNK, a.length - off);
                            direct.put(a, off, n);
                            sha.update(a, off, n);
                        }
                        toWrite.add(direct.flip());
                    }
                    empty.add(a);
                }
            } catch (InterruptedException e) {
                fail(new InterruptedIOException("the blob store is stopping"));
            } catch (RuntimeException e) {
                fail(new IOException(e));
            } finally {
                toWrite.add(END_BUFFER);
            }
        }

        @SuppressWarnings("ReferenceEquality") // END_BUFFER is a sentinel: identity is the test
        private void write() {
            long at = 0;
            try {
                for (; ; ) {
                    ByteBuffer direct = toWrite.take();
                    if (direct == END_BUFFER) {
                        return;
                    }
                    try {
                        if (failure == null) {
                            while (direct.hasRemaining()) {
                                at += out.write(direct, at);
                            }
                        }
                    } catch (IOException | RuntimeException e) {
                        fail(e instanceof IOException io ? io : new IOException(e));
                    } finally {
                        written.add(direct);
                    }
                }
            } catch (InterruptedException e) {
                fail(new InterruptedIOException("the blob store is stopping"));
            }
        }

        private void fail(IOException e) {
            if (failure == null) {
                failure = e;
            }
        }

        /** Queues a full array; returns an empty one (a new one while fewer than DEPTH are taken). */
        byte[] swap(byte[] full) throws IOException {
            check();
            try {
                toHash.put(full);
                byte[] next = empty.poll();
                if (next == null && owned < DEPTH) {
                    owned++;
                    return array();
                }
                while (next == null) {
                    next = empty.poll(100, TimeUnit.MILLISECONDS);
                    if (next == null && (hashing.isDone() || writing.isDone())) {
                        check();
                        throw new InterruptedIOException("the blob store is stopping");
                    }
                }
                check();
                return next;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while writing a blob");
            }
        }

        /** Waits until every queued array is hashed and written; throws what a stage threw. */
        void finish() throws IOException {
            stop();
            check();
        }

        /** Ends both stages and waits for them, so that the file is not closed under a write; pools the arrays. */
        void stop() {
            if (stopped) {
                return;
            }
            stopped = true;
            boolean interrupted = false;
            toHash.add(END);
            for (Future<?> stage : List.of(hashing, writing)) {
                for (; ; ) {
                    try {
                        stage.get();
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true;
                    } catch (ExecutionException e) {
                        fail(new IOException(e.getCause()));
                        break;
                    } catch (CancellationException e) {
                        fail(new InterruptedIOException("the blob store is stopping"));
                        break;
                    }
                }
            }
            for (byte[] a; (a = empty.poll()) != null; ) {
                releaseArray(a);
            }
            for (ByteBuffer b; (b = written.poll()) != null; ) {
                release(b);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        private void check() throws IOException {
            IOException e = failure;
            if (e != null) {
                throw new IOException("writing the blob failed: " + e.getMessage(), e);
            }
        }
    }

    private static final byte[] END = new byte[0];
    private static final ByteBuffer END_BUFFER = ByteBuffer.allocate(0);

    /** O_DIRECT ({@code com.sun.nio.file.ExtendedOpenOption.DIRECT}, module jdk.unsupported), or null. */
    private static OpenOption directOption() {
        try {
            Class<?> type =
                    Class.forName("com.sun.nio.file.ExtendedOpenOption", true, ClassLoader.getPlatformClassLoader());
            for (Object constant : type.getEnumConstants()) {
                if (((Enum<?>) constant).name().equals("DIRECT")) {
                    return (OpenOption) constant;
                }
            }
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            LOG.info("this JDK offers no O_DIRECT ({}); blobs are written through the page cache", e.toString());
        }
        return null;
    }

    /** The filesystem's block size, which O_DIRECT needs buffers, lengths and positions aligned to; 0 if unknown. */
    private static int alignment(Path dir) {
        try {
            long size = Files.getFileStore(dir).getBlockSize();
            return size > 0 && size <= DIRECT_BUFFER && Long.bitCount(size) == 1 ? (int) size : 0;
        } catch (IOException | UnsupportedOperationException e) {
            return 0;
        }
    }

    @Override
    public Blob stat(String key) throws IOException {
        Path file = file(key);
        return file == null ? null : stat(key, file);
    }

    private static Blob stat(String key, Path file) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return null;
        }
        return new Blob(
                key,
                attributes.size(),
                key.substring(key.length() - 64),
                attributes.lastModifiedTime().toInstant());
    }

    @Override
    public InputStream open(String key, long offset, long length) throws IOException {
        FileChannel in = channel(key);
        try {
            long size = in.size();
            if (offset < 0 || offset > size || length < -1 || (length > size - offset)) {
                throw new IllegalArgumentException(
                        "range " + offset + "+" + length + " is not within the blob's " + size + " bytes");
            }
            return new Mapped(in, offset, length == -1 ? size : offset + length);
        } catch (IOException | RuntimeException e) {
            in.close();
            throw e;
        }
    }

    /** The blob's own file, read-only: a reader maps it (or sends it) without this store copying anything. */
    @Override
    public Optional<FileChannel> openFile(String key) throws IOException {
        return Optional.of(channel(key));
    }

    private FileChannel channel(String key) throws IOException {
        Path file = file(key);
        if (file == null) {
            throw new NoSuchBlobException(key);
        }
        try {
            return FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new NoSuchBlobException(key);
        }
    }

    /**
     * A blob read through the page cache mapped into memory, {@link #WINDOW} bytes at a time: one copy (page cache to
     * the caller's array) where a read(2) makes two (into a direct buffer, then into the array). Blobs are never
     * changed in place (a new content is a new file; a delete unlinks), so a mapping never loses its bytes; a window
     * is unmapped when it is collected, and an unlinked blob's space is freed then.
     */
    private static final class Mapped extends InputStream {
        private final FileChannel channel;
        private final long end;
        private long position;
        private ByteBuffer window;

        Mapped(FileChannel channel, long position, long end) {
            this.channel = channel;
            this.position = position;
            this.end = end;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) == -1 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (position >= end) {
                return -1;
            }
            if (window == null || !window.hasRemaining()) {
                if (!channel.isOpen()) {
                    throw new IOException("the blob stream is closed");
                }
                window = channel.map(FileChannel.MapMode.READ_ONLY, position, Math.min(WINDOW, end - position));
            }
            int n = Math.min(len, window.remaining());
            window.get(b, off, n);
            position += n;
            return n;
        }

        @Override
        public long skip(long n) {
            long skipped = Math.max(0, Math.min(n, end - position));
            if (skipped > 0) {
                position += skipped;
                window = null;
            }
            return skipped;
        }

        @Override
        public int available() {
            return (int) Math.min(Integer.MAX_VALUE, end - position);
        }

        @Override
        public void close() throws IOException {
            window = null;
            channel.close();
        }
    }

    @Override
    public boolean delete(String key) throws IOException {
        Path file = file(key);
        if (file == null || !Files.deleteIfExists(file)) {
            return false;
        }
        syncDirectory(file.getParent());
        return true;
    }

    @Override
    public Stream<Blob> list(String prefix) throws IOException {
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null");
        }
        Iterator<Blob> walk = new Walk(prefix);
        return StreamSupport.stream(
                Spliterators.spliteratorUnknownSize(
                        walk, Spliterator.ORDERED | Spliterator.DISTINCT | Spliterator.NONNULL),
                false);
    }

    /**
     * Removes temp files that no writer holds and that are older than the configured age: what a crash (or a kill)
     * left behind. A writer in this store is known by name; one in another process holds a lock on its file.
     *
     * @return how many files were removed
     */
    int removeAbandonedTemps() throws IOException {
        int removed = 0;
        Instant before = Instant.now().minus(staleTemp);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(temp)) {
            for (Path file : files) {
                if (writing.contains(file)) {
                    continue;
                }
                try {
                    if (Files.getLastModifiedTime(file).toInstant().isAfter(before) || heldByAnotherWriter(file)) {
                        continue;
                    }
                    if (Files.deleteIfExists(file)) {
                        removed++;
                    }
                } catch (NoSuchFileException e) {
                    // its writer finished or another sweep removed it
                }
            }
        }
        if (removed > 0) {
            LOG.info("removed {} abandoned blob temp file(s) from {}", removed, temp);
        }
        return removed;
    }

    private static boolean heldByAnotherWriter(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE);
                FileLock lock = channel.tryLock()) {
            return lock == null;
        } catch (OverlappingFileLockException e) {
            return true;
        }
    }

    private static void checkNamespace(String namespace) {
        if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException(
                    "a namespace is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
    }

    /** The file of a well-formed key, else null. */
    private Path file(String key) {
        Matcher m = key == null ? null : KEY.matcher(key);
        return m != null && m.matches() ? file(m.group(1), m.group(2)) : null;
    }

    private Path file(String namespace, String hash) {
        return root.resolve(namespace)
                .resolve(hash.substring(0, 2))
                .resolve(hash.substring(2, 4))
                .resolve(hash);
    }

    /** Creates {@code dir} and its missing parents below the root; returns those it made, deepest last. */
    private List<Path> makeDirectories(Path dir) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path d = dir; !d.equals(root) && !Files.isDirectory(d); d = d.getParent()) {
            missing.add(0, d);
        }
        List<Path> made = new ArrayList<>();
        for (Path d : missing) {
            try {
                Files.createDirectory(d, directoryMode);
                made.add(d);
            } catch (FileAlreadyExistsException e) {
                // a concurrent put made it
            }
        }
        return made;
    }

    /**
     * Makes a directory the store owns 0700: the root may have been made by an older version or by an operator with
     * a looser umask, and it alone keeps other accounts from the blobs already stored under it.
     */
    private static void restrict(Path dir) {
        try {
            if (!Files.getPosixFilePermissions(dir).equals(OWNER_DIRECTORY)) {
                Files.setPosixFilePermissions(dir, OWNER_DIRECTORY);
            }
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            LOG.warn("could not make {} readable by its owner only: {}", dir, e.toString());
        }
    }

    /** Makes a directory's entries (a rename, a new file, a deletion) durable. */
    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** Whether a walk that has reached the key part {@code partial} can still find keys starting with {@code prefix}. */
    private static boolean mayMatch(String partial, String prefix) {
        return partial.startsWith(prefix) || prefix.startsWith(partial);
    }

    /** The names in {@code dir} that {@code keep} accepts, sorted; none when it is gone. */
    private static List<String> names(Path dir, Pattern keep) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (keep.matcher(name).matches()) {
                    out.add(name);
                }
            }
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(null);
        return out;
    }

    /**
     * Walks the tree in key order, one directory level at a time: namespaces (ordered by {@code <namespace>/}, which is
     * how their keys sort), then each fan-out level, then the blobs of one leaf directory.
     */
    private final class Walk implements Iterator<Blob> {
        private final String prefix;
        private final Iterator<String> namespaces;
        private String namespace;
        private Iterator<String> first = List.<String>of().iterator();
        private String firstFan;
        private Iterator<String> second = List.<String>of().iterator();
        private Iterator<String> leaves = List.<String>of().iterator();
        private Blob next;

        Walk(String prefix) {
            this.prefix = prefix;
            List<String> all = new ArrayList<>(names(root, NAMESPACE).stream()
                    .filter(n -> mayMatch(n + "/", prefix))
                    .toList());
            all.sort((a, b) -> (a + "/").compareTo(b + "/"));
            namespaces = all.iterator();
        }

        @Override
        public boolean hasNext() {
            while (next == null) {
                if (leaves.hasNext()) {
                    String hash = leaves.next();
                    String key = namespace + "/" + hash;
                    if (key.startsWith(prefix)) {
                        try {
                            next = stat(key, file(namespace, hash));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                } else if (second.hasNext()) {
                    String fan = second.next();
                    if (mayMatch(namespace + "/" + firstFan + fan, prefix)) {
                        Path dir = root.resolve(namespace).resolve(firstFan).resolve(fan);
                        leaves = names(dir, HASH).stream()
                                .filter(h -> h.startsWith(firstFan + fan))
                                .iterator();
                    }
                } else if (first.hasNext()) {
                    String fan = first.next();
                    if (mayMatch(namespace + "/" + fan, prefix)) {
                        firstFan = fan;
                        second =
                                names(root.resolve(namespace).resolve(fan), FAN).iterator();
                    }
                } else if (namespaces.hasNext()) {
                    namespace = namespaces.next();
                    first = names(root.resolve(namespace), FAN).iterator();
                } else {
                    return false;
                }
            }
            return true;
        }

        @Override
        public Blob next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Blob out = next;
            next = null;
            return out;
        }
    }
}
