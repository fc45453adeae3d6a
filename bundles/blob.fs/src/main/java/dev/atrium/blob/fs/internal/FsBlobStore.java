package dev.atrium.blob.fs.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.blob.api.NoSuchBlobException;

/**
 * Blobs as files: {@code <data>/blobs/<namespace>/<ab>/<cd>/<sha256>}, where {@code ab} and {@code cd} are the first
 * two byte pairs of the hash (so no directory holds more than 256 entries before the leaves). A put streams into
 * {@code <data>/blobs/.tmp/}, hashing and counting as it goes, fsyncs the file, renames it into place and fsyncs the
 * directory: a blob is either whole under its key or absent. Temp files a crash left behind are removed at activation
 * and then periodically, once they are older than {@code staleTempSeconds} and no live writer holds them.
 */
// immediate: the sweep of a crash's leftovers runs at start, not when the first consumer happens to ask
@Component(service = BlobStore.class, configurationPid = "dev.atrium.blob.fs", configurationPolicy = ConfigurationPolicy.OPTIONAL,
        immediate = true, property = { BlobStore.BACKEND + "=fs", "service.ranking:Integer=0" })
@Designate(ocd = FsBlobStore.Config.class)
public final class FsBlobStore implements BlobStore {

    @ObjectClassDefinition(name = "Atrium blobs on the filesystem")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA); blobs live in its blobs/")
        String dataDirectory() default "data";

        @AttributeDefinition(description = "Seconds after which a temp file no writer holds is taken for a crash's leftover and removed")
        long staleTempSeconds() default 300;
    }

    static final String TEMP = ".tmp";
    private static final String PART = ".part";
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern KEY = Pattern.compile("([A-Za-z0-9][A-Za-z0-9._-]{0,127})/([0-9a-f]{64})");
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern FAN = Pattern.compile("[0-9a-f]{2}");
    private static final int BUFFER = 64 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(FsBlobStore.class);

    private final Path root;
    private final Path temp;
    private final Duration staleTemp;
    /** The temp files this store is writing now: never taken for leftovers. */
    private final Set<Path> writing = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService sweeper;

    @Activate
    public FsBlobStore(Config config) throws IOException {
        this(Path.of(config.dataDirectory()).toAbsolutePath().resolve("blobs"), Duration.ofSeconds(Math.max(0, config.staleTempSeconds())));
    }

    FsBlobStore(Path root, Duration staleTemp) throws IOException {
        this.root = root.toAbsolutePath().normalize();
        this.temp = this.root.resolve(TEMP);
        this.staleTemp = staleTemp;
        Files.createDirectories(temp);
        removeAbandonedTemps();
        sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "atrium-blob-fs-sweep");
            t.setDaemon(true);
            return t;
        });
        long period = Math.min(3600, Math.max(10, staleTemp.toSeconds()));
        sweeper.scheduleWithFixedDelay(() -> {
            try {
                removeAbandonedTemps();
            } catch (IOException | RuntimeException e) {
                LOG.warn("blob temp files in {} could not be swept", temp, e);
            }
        }, period, period, TimeUnit.SECONDS);
    }

    @Deactivate
    void close() throws InterruptedException {
        sweeper.shutdownNow();
        sweeper.awaitTermination(10, TimeUnit.SECONDS);
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
            long size = 0;
            try (FileChannel out = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                    FileLock held = out.lock()) {
                byte[] buffer = new byte[BUFFER];
                ByteBuffer wrapped = ByteBuffer.wrap(buffer);
                for (int n; (n = content.read(buffer)) != -1;) {
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
                out.force(true);
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
        return new Blob(key, attributes.size(), key.substring(key.length() - 64), attributes.lastModifiedTime().toInstant());
    }

    @Override
    public InputStream open(String key, long offset, long length) throws IOException {
        Path file = file(key);
        if (file == null) {
            throw new NoSuchBlobException(key);
        }
        FileChannel in;
        try {
            in = FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new NoSuchBlobException(key);
        }
        try {
            long size = in.size();
            if (offset < 0 || offset > size || length < -1 || (length > size - offset)) {
                throw new IllegalArgumentException("range " + offset + "+" + length + " is not within the blob's " + size + " bytes");
            }
            in.position(offset);
            return new BoundedInputStream(Channels.newInputStream(in), length == -1 ? size - offset : length);
        } catch (IOException | RuntimeException e) {
            in.close();
            throw e;
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
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(walk,
                Spliterator.ORDERED | Spliterator.DISTINCT | Spliterator.NONNULL), false);
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
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE); FileLock lock = channel.tryLock()) {
            return lock == null;
        } catch (OverlappingFileLockException e) {
            return true;
        }
    }

    private static void checkNamespace(String namespace) {
        if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException("a namespace is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
    }

    /** The file of a well-formed key, else null. */
    private Path file(String key) {
        Matcher m = key == null ? null : KEY.matcher(key);
        return m != null && m.matches() ? file(m.group(1), m.group(2)) : null;
    }

    private Path file(String namespace, String hash) {
        return root.resolve(namespace).resolve(hash.substring(0, 2)).resolve(hash.substring(2, 4)).resolve(hash);
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
                Files.createDirectory(d);
                made.add(d);
            } catch (FileAlreadyExistsException e) {
                // a concurrent put made it
            }
        }
        return made;
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
            List<String> all = new ArrayList<>(names(root, NAMESPACE).stream().filter(n -> mayMatch(n + "/", prefix)).toList());
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
                        leaves = names(dir, HASH).stream().filter(h -> h.startsWith(firstFan + fan)).iterator();
                    }
                } else if (first.hasNext()) {
                    String fan = first.next();
                    if (mayMatch(namespace + "/" + fan, prefix)) {
                        firstFan = fan;
                        second = names(root.resolve(namespace).resolve(fan), FAN).iterator();
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
