package dev.atrium.storage.internal;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Files and folders of workspaces: their rows in {@code storage_files}, their bytes in the {@link BlobStore} under the
 * namespace {@value #NAMESPACE}. It knows workspaces only by id; every caller has proven the workspace through the
 * kernel's owner scope first.
 *
 * <p>Blobs are content-addressed, so rows may share one. A blob is deleted only while holding a transaction-scoped
 * advisory lock on its key and only when no row refers to it; a write takes the same lock, checks the blob is still
 * there and records its row in that transaction. Bytes written whose row never commits (a crash between the two)
 * are found by the sweep: blobs of the namespace that no row names and that are older than the grace period.
 *
 * <p>Why one class of about 940 lines: every write, move and delete takes the same advisory locks and quota checks in
 * one transaction with the rows and blobs it touches; split, those rules would be spread over classes that must agree.
 */
@Component(service = Storage.class, configurationPid = Storage.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = Storage.Config.class)
public class Storage {

    static final String PID = "dev.atrium.storage";
    static final String NAMESPACE = "storage";
    private static final int SWEEP_BATCH = 500;
    private static final Logger LOG = LoggerFactory.getLogger(Storage.class);

    @ObjectClassDefinition(name = "Atrium workspace storage")
    public @interface Config {
        @AttributeDefinition(description = "Largest file in bytes")
        long maxFileBytes() default 5L << 30;

        @AttributeDefinition(description = "Bytes a workspace may hold (files and unconfirmed uploads); 0: no limit")
        long quotaBytes() default 50L << 30;

        @AttributeDefinition(description = "Files and folders a workspace may hold; 0: no limit")
        long quotaFiles() default 100_000;

        @AttributeDefinition(description = "Seconds an unconfirmed direct upload is kept before it is removed")
        long uploadTtlSeconds() default 24 * 3600;

        @AttributeDefinition(
                description = "Seconds a blob no file refers to is spared (its row may still be committing)")
        long orphanGraceSeconds() default 3600;

        @AttributeDefinition(description = "Seconds between cleanups of expired uploads and orphan blobs; 0: none")
        long sweepSeconds() default 600;

        @AttributeDefinition(
                description =
                        "Key signing download URLs (at least 32 characters); empty: one generated and kept in the database")
        String downloadUrlKey() default "";

        @AttributeDefinition(description = "Longest lifetime of a signed download URL in seconds")
        long downloadUrlMaxSeconds() default 7 * 24 * 3600;
    }

    private final Config config;
    private final Sql sql;
    private final BlobStore blobs;
    private final SignedUrls signer;
    private final ScheduledExecutorService sweeper = NamedThreads.scheduler("atrium-storage-sweep");

    @Activate
    public Storage(
            Config config,
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            @Reference BlobStore blobs,
            BundleContext context) {
        this.config = config;
        this.sql = new Sql(dataSource);
        this.blobs = blobs;
        migrations.apply(context.getBundle());
        this.signer = new SignedUrls(urlKey(config.downloadUrlKey()));
        if (config.sweepSeconds() > 0) {
            NamedThreads.repeat(
                    sweeper,
                    this::sweep,
                    Duration.ofSeconds(Math.min(config.sweepSeconds(), 5)),
                    Duration.ofSeconds(config.sweepSeconds()));
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        sweeper.shutdownNow();
        sweeper.awaitTermination(30, TimeUnit.SECONDS);
    }

    Config config() {
        return config;
    }

    SignedUrls signer() {
        return signer;
    }

    private byte[] urlKey(String configured) {
        if (configured != null && !configured.isBlank()) {
            byte[] key = configured.getBytes(StandardCharsets.UTF_8);
            if (key.length < 32) {
                throw new IllegalArgumentException(PID + " downloadUrlKey must be at least 32 characters");
            }
            return key;
        }
        sql.update(
                "INSERT INTO storage_secrets (name, value) VALUES ('download-url-key', ?) ON CONFLICT (name) DO NOTHING",
                Digests.base64Url(Ids.randomBytes(32)));
        return Digests.fromBase64Url(
                sql.one("SELECT value FROM storage_secrets WHERE name = 'download-url-key'", rs -> rs.getString(1))
                        .orElseThrow());
    }

    // ---------------------------------------------------------------- reading

    static ApiException notFound() {
        return ApiException.notFound("file not found");
    }

    /** A listed file or folder of the workspace; 404 otherwise. */
    Entry get(String spaceId, String id) {
        return sql.one(
                        "SELECT " + Entry.COLUMNS
                                + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'ready'",
                        Entry::of,
                        id,
                        spaceId)
                .orElseThrow(Storage::notFound);
    }

    Optional<Entry> byPath(String spaceId, String path) {
        return sql.one(
                "SELECT " + Entry.COLUMNS + " FROM storage_files WHERE space_id = ? AND path = ? AND status = 'ready'",
                Entry::of,
                spaceId,
                path);
    }

    /** The folder named by id or by path ({@code ""}: the root, returned as null); 404 when it is none. */
    Entry folder(String spaceId, String folderId, String path) {
        Entry folder;
        if (folderId != null && !folderId.isBlank()) {
            folder = get(spaceId, folderId);
        } else if (path == null || path.isEmpty()) {
            return null;
        } else {
            folder = byPath(spaceId, path).orElseThrow(() -> ApiException.notFound("folder not found"));
        }
        if (!folder.folder()) {
            throw ApiException.badRequest("not a folder: " + folder.path());
        }
        return folder;
    }

    enum Sort {
        NAME("name"),
        SIZE("size"),
        CREATED_AT("created_at"),
        UPDATED_AT("updated_at");

        final String column;

        Sort(String column) {
            this.column = column;
        }

        static Sort of(String value) {
            if (value == null || value.isBlank()) {
                return NAME;
            }
            for (Sort s : values()) {
                if (s.column.equals(value)) {
                    return s;
                }
            }
            throw ApiException.badRequest("sort must be one of name, size, created_at, updated_at");
        }
    }

    /** A folder's children: folders first, then files, each ordered by {@code sort}; ties by name and id. */
    List<Entry> list(String spaceId, Entry folder, Sort sort, boolean descending, int limit, int offset) {
        String dir = descending ? " DESC" : " ASC";
        String order = "kind = 'file'" + ", " + sort.column + dir + ", name" + dir + ", id";
        return sql.list(
                "SELECT " + Entry.COLUMNS
                        + " FROM storage_files WHERE space_id = ? AND parent_id IS NOT DISTINCT FROM ? "
                        + "AND status = 'ready' ORDER BY " + order + " LIMIT ? OFFSET ?",
                Entry::of,
                spaceId,
                folder == null ? null : folder.id(),
                limit,
                offset);
    }

    long count(String spaceId, Entry folder) {
        return sql.count(
                "SELECT count(*) FROM storage_files WHERE space_id = ? AND parent_id IS NOT DISTINCT FROM ? AND status = 'ready'",
                spaceId,
                folder == null ? null : folder.id());
    }

    /** Up to {@code limit} files and folders under {@code folderPath} (all when {@code ""}) whose path sorts after {@code after}. */
    List<Entry> subtreePage(String spaceId, String folderPath, String after, int limit) {
        if (folderPath.isEmpty()) {
            return sql.list(
                    "SELECT " + Entry.COLUMNS
                            + " FROM storage_files WHERE space_id = ? AND status = 'ready' AND path > ? "
                            + "ORDER BY path LIMIT ?",
                    Entry::of,
                    spaceId,
                    after,
                    limit);
        }
        String low = folderPath + "/";
        return sql.list(
                "SELECT " + Entry.COLUMNS
                        + " FROM storage_files WHERE space_id = ? AND status = 'ready' AND path >= ? AND path < ? "
                        + "AND path > ? ORDER BY path LIMIT ?",
                Entry::of,
                spaceId,
                low,
                folderPath + "0",
                after,
                limit);
    }

    InputStream open(Entry file, long offset, long length) throws IOException {
        return blobs.open(file.blobKey(), offset, length);
    }

    /** The file's bytes as the blob store's own file, when it keeps files (see {@link BlobStore#openFile}). */
    Optional<java.nio.channels.FileChannel> openFile(Entry file) throws IOException {
        return blobs.openFile(file.blobKey());
    }

    // ---------------------------------------------------------------- writing

    /** Where a new entry goes: its parent folder's path and its name. */
    record Target(String parentPath, String name) {
        String path() {
            return Paths.join(parentPath, name);
        }
    }

    /** Creates a folder (and any missing folder above it); 409 when something is already there. */
    Entry createFolder(String spaceId, Target target) {
        Paths.checkLength("path", target.path());
        return sql.tx(c -> {
            lockSpace(c, spaceId);
            if (find(c, spaceId, target.path()).isPresent()) {
                throw ApiException.conflict("something named " + target.path() + " already exists");
            }
            String parentId = ensureFolders(c, spaceId, target.parentPath());
            checkQuota(c, spaceId, 1, 0);
            return insert(c, spaceId, parentId, target, "folder", "ready", 0, null, null, null);
        });
    }

    /**
     * Writes the bytes of {@code content} as the file at {@code target} (a new file: 409 when the path is taken, unless
     * {@code replace}) or as the new content of {@code existingId} (when not null; {@code ifMatch}, when given, must be
     * its current ETag, else 412).
     */
    Entry write(
            String spaceId,
            Target target,
            String existingId,
            boolean replace,
            InputStream content,
            long declaredLength,
            String contentType,
            String ifMatch)
            throws IOException {
        Entry existing = existingId == null ? null : get(spaceId, existingId);
        if (existing != null && existing.folder()) {
            throw ApiException.badRequest("a folder has no content");
        }
        if (existing != null) {
            checkIfMatch(existing, ifMatch);
        } else {
            Paths.checkLength("path", target.path());
        }
        long limit = writeLimit(spaceId, existing == null ? 0 : existing.size());
        if (declaredLength > limit) {
            throw tooLarge(limit);
        }
        Blob blob = put(content, limit);
        boolean recorded = false;
        String[] replaced = new String[1];
        try {
            Entry written = sql.tx(c -> {
                replaced[0] = null;
                lockSpace(c, spaceId);
                lockBlob(c, blob.key());
                requireBlob(blob.key());
                Entry current;
                if (existing != null) {
                    current = Sql.one(
                                    c,
                                    "SELECT " + Entry.COLUMNS
                                            + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'ready' "
                                            + "FOR UPDATE",
                                    Entry::of,
                                    existing.id(),
                                    spaceId)
                            .orElseThrow(Storage::notFound);
                    checkIfMatch(current, ifMatch);
                } else {
                    current = find(c, spaceId, target.path()).orElse(null);
                    if (current != null && (!replace || current.folder())) {
                        throw ApiException.conflict("something named " + target.path() + " already exists");
                    }
                }
                String type = contentType != null
                        ? contentType
                        : current != null ? current.contentType() : guessType(target.name());
                if (current != null) {
                    checkQuota(c, spaceId, 0, blob.size() - current.size());
                    replaced[0] = current.blobKey();
                    return Sql.one(
                                    c,
                                    "UPDATE storage_files SET size = ?, content_type = ?, sha256 = ?, blob_key = ?, etag = ?, "
                                            + "updated_at = now() WHERE id = ? RETURNING " + Entry.COLUMNS,
                                    Entry::of,
                                    blob.size(),
                                    type,
                                    blob.sha256(),
                                    blob.key(),
                                    Entry.etagOf(blob.sha256()),
                                    current.id())
                            .orElseThrow();
                }
                String parentId = ensureFolders(c, spaceId, target.parentPath());
                checkQuota(c, spaceId, 1, blob.size());
                return insert(
                        c, spaceId, parentId, target, "file", "ready", blob.size(), type, blob.sha256(), blob.key());
            });
            recorded = true;
            if (replaced[0] != null && !replaced[0].equals(blob.key())) {
                release(replaced[0]);
            }
            return written;
        } finally {
            if (!recorded) {
                release(blob.key());
            }
        }
    }

    private Blob put(InputStream content, long limit) throws IOException {
        try {
            return blobs.put(NAMESPACE, content, limit);
        } catch (BlobTooLargeException e) {
            throw tooLarge(limit);
        }
    }

    /** The most bytes a write to this workspace may bring, replacing a file of {@code replacing} bytes. */
    private long writeLimit(String spaceId, long replacing) {
        long limit = config.maxFileBytes();
        if (config.quotaBytes() > 0) {
            long left = config.quotaBytes() - usage(spaceId)[1] + replacing;
            if (left < limit) {
                if (left <= 0) {
                    throw quotaBytesExceeded();
                }
                limit = left;
            }
        }
        return limit;
    }

    private ApiException tooLarge(long limit) {
        if (limit < config.maxFileBytes()) {
            return quotaBytesExceeded();
        }
        return new ApiException(
                413, "PAYLOAD_TOO_LARGE", "a file may hold at most " + config.maxFileBytes() + " bytes");
    }

    private ApiException quotaBytesExceeded() {
        return new ApiException(
                413,
                "PAYLOAD_TOO_LARGE",
                "the workspace's storage quota of " + config.quotaBytes() + " bytes would be exceeded");
    }

    private static void checkIfMatch(Entry current, String ifMatch) {
        if (ifMatch == null || ifMatch.isBlank() || ifMatch.trim().equals("*")) {
            return;
        }
        for (String tag : ifMatch.split(",")) {
            String t = tag.trim();
            if (t.startsWith("W/")) {
                continue; // If-Match compares strongly (RFC 9110 §13.1.1)
            }
            if (t.equals(current.etag())) {
                return;
            }
        }
        throw new ApiException(412, "PRECONDITION_FAILED", "the file has changed: its ETag is " + current.etag());
    }

    /** {files and folders, bytes} of a workspace, unconfirmed uploads counted at their announced size. */
    long[] usage(String spaceId) {
        return sql.run(c -> usage(c, spaceId));
    }

    private static long[] usage(Connection c, String spaceId) throws SQLException {
        return Sql.one(
                        c,
                        "SELECT entries, bytes FROM storage_usage WHERE space_id = ?",
                        rs -> new long[] {rs.getLong(1), rs.getLong(2)},
                        spaceId)
                .orElse(new long[] {0, 0});
    }

    private void checkQuota(Connection c, String spaceId, long entries, long bytes) throws SQLException {
        if (config.quotaFiles() <= 0 && config.quotaBytes() <= 0) {
            return;
        }
        long[] used = usage(c, spaceId);
        if (config.quotaFiles() > 0 && entries > 0 && used[0] + entries > config.quotaFiles()) {
            throw ApiException.conflict(
                    "the workspace's storage quota of " + config.quotaFiles() + " files and folders would be exceeded");
        }
        if (config.quotaBytes() > 0 && bytes > 0 && used[1] + bytes > config.quotaBytes()) {
            throw quotaBytesExceeded();
        }
    }

    private static Optional<Entry> find(Connection c, String spaceId, String path) throws SQLException {
        return Sql.one(
                c,
                "SELECT " + Entry.COLUMNS + " FROM storage_files WHERE space_id = ? AND path = ? AND status = 'ready'",
                Entry::of,
                spaceId,
                path);
    }

    /** The id of the folder at {@code path} (null for the root), creating it and any missing folder above it. */
    private String ensureFolders(Connection c, String spaceId, String path) throws SQLException {
        if (path.isEmpty()) {
            return null;
        }
        String parentId = null;
        String at = "";
        for (String name : path.split("/")) {
            at = Paths.join(at, name);
            Optional<Entry> found = find(c, spaceId, at);
            if (found.isPresent()) {
                if (!found.get().folder()) {
                    throw ApiException.conflict("a file is in the way: " + at + " is not a folder");
                }
                parentId = found.get().id();
            } else {
                checkQuota(c, spaceId, 1, 0);
                parentId = insert(
                                c,
                                spaceId,
                                parentId,
                                new Target(Paths.parent(at), name),
                                "folder",
                                "ready",
                                0,
                                null,
                                null,
                                null)
                        .id();
            }
        }
        return parentId;
    }

    private static Entry insert(
            Connection c,
            String spaceId,
            String parentId,
            Target target,
            String kind,
            String status,
            long size,
            String contentType,
            String sha256,
            String blobKey)
            throws SQLException {
        try {
            return Sql.one(
                            c,
                            "INSERT INTO storage_files (id, space_id, parent_id, name, path, kind, status, size, content_type, sha256, blob_key, etag) "
                                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + Entry.COLUMNS,
                            Entry::of,
                            Ids.id("fil"),
                            spaceId,
                            parentId,
                            target.name(),
                            target.path(),
                            kind,
                            status,
                            size,
                            contentType,
                            sha256,
                            blobKey,
                            sha256 == null ? null : Entry.etagOf(sha256))
                    .orElseThrow();
        } catch (SQLException e) {
            if (e.getSQLState() != null && e.getSQLState().equals("23505")) {
                throw ApiException.conflict("something named " + target.path() + " already exists");
            }
            throw e;
        }
    }

    /** Renames or moves an entry (a folder with everything under it); 409 when the new path is taken. */
    Entry move(String spaceId, String id, String newParentPath, String newName) {
        return sql.tx(c -> {
            lockSpace(c, spaceId);
            return move(c, spaceId, id, newParentPath, newName);
        });
    }

    private Entry move(Connection c, String spaceId, String id, String newParentPath, String newName)
            throws SQLException {
        Entry e = Sql.one(
                        c,
                        "SELECT " + Entry.COLUMNS
                                + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'ready' FOR UPDATE",
                        Entry::of,
                        id,
                        spaceId)
                .orElseThrow(Storage::notFound);
        String parentPath = newParentPath == null ? Paths.parent(e.path()) : newParentPath;
        String name = newName == null ? e.name() : newName;
        String path = Paths.join(parentPath, name);
        if (path.equals(e.path())) {
            return e;
        }
        if (e.folder() && Paths.within(parentPath, e.path())) {
            throw ApiException.badRequest("a folder cannot move into itself");
        }
        String parentId = null;
        if (!parentPath.isEmpty()) {
            Entry parent = find(c, spaceId, parentPath)
                    .orElseThrow(() -> ApiException.notFound("destination folder not found"));
            if (!parent.folder()) {
                throw ApiException.badRequest("the destination is not a folder: " + parentPath);
            }
            parentId = parent.id();
        }
        if (find(c, spaceId, path).isPresent()) {
            throw ApiException.conflict("something named " + path + " already exists");
        }
        Paths.checkLength("path", path);
        if (e.folder()) {
            long longest = Sql.count(
                    c,
                    "SELECT coalesce(max(octet_length(path)), 0) FROM storage_files WHERE space_id = ? AND path >= ? AND path < ?",
                    spaceId,
                    e.path() + "/",
                    e.path() + "0");
            long grows = (long) path.getBytes(StandardCharsets.UTF_8).length
                    - e.path().getBytes(StandardCharsets.UTF_8).length;
            if (longest + grows > Paths.MAX_PATH_BYTES) {
                throw ApiException.badRequest(
                        "a path under the folder would be longer than " + Paths.MAX_PATH_BYTES + " bytes");
            }
            Sql.update(
                    c,
                    "UPDATE storage_files SET path = ? || substr(path, ?) WHERE space_id = ? AND path >= ? AND path < ?",
                    path,
                    e.path().length() + 1,
                    spaceId,
                    e.path() + "/",
                    e.path() + "0");
        }
        return Sql.one(
                        c,
                        "UPDATE storage_files SET parent_id = ?, name = ?, path = ?, updated_at = now() WHERE id = ? RETURNING "
                                + Entry.COLUMNS,
                        Entry::of,
                        parentId,
                        name,
                        path,
                        id)
                .orElseThrow();
    }

    /** Deletes entries (folders with everything under them), all or none: 404 when one is not there. */
    int delete(String spaceId, List<String> ids) {
        List<String> keys = new ArrayList<>();
        int deleted = sql.tx(c -> {
            keys.clear();
            lockSpace(c, spaceId);
            int n = 0;
            for (String id : new LinkedHashSet<>(ids)) {
                Optional<Entry> e = Sql.one(
                        c,
                        "SELECT " + Entry.COLUMNS
                                + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'ready'",
                        Entry::of,
                        id,
                        spaceId);
                if (e.isEmpty()) {
                    if (ids.size() == 1) {
                        throw notFound();
                    }
                    throw ApiException.notFound("file not found: " + id);
                }
                List<String> gone = Sql.list(
                        c,
                        "DELETE FROM storage_files WHERE space_id = ? AND (id = ? OR (path >= ? AND path < ?)) RETURNING blob_key",
                        rs -> rs.getString(1),
                        spaceId,
                        id,
                        e.get().path() + "/",
                        e.get().path() + "0");
                n += gone.size();
                gone.stream().filter(k -> k != null).forEach(keys::add);
            }
            return n;
        });
        new LinkedHashSet<>(keys).forEach(this::release);
        return deleted;
    }

    /** Deletes every entry of a workspace, pending uploads too (an import that failed after this part). */
    int deleteAll(String spaceId) {
        List<String> keys = sql.tx(c -> {
            lockSpace(c, spaceId);
            return Sql.list(
                    c,
                    "DELETE FROM storage_files WHERE space_id = ? RETURNING blob_key",
                    rs -> rs.getString(1),
                    spaceId);
        });
        keys.stream().filter(k -> k != null).distinct().forEach(this::release);
        return keys.size();
    }

    /** Moves entries into one folder, all or none. */
    List<Entry> moveAll(String spaceId, List<String> ids, String parentPath) {
        return sql.tx(c -> {
            lockSpace(c, spaceId);
            List<Entry> out = new ArrayList<>();
            for (String id : new LinkedHashSet<>(ids)) {
                out.add(move(c, spaceId, id, parentPath, null));
            }
            return out;
        });
    }

    /** Renames entries, all or none. */
    List<Entry> renameAll(String spaceId, List<Map.Entry<String, String>> renames) {
        return sql.tx(c -> {
            lockSpace(c, spaceId);
            List<Entry> out = new ArrayList<>();
            for (Map.Entry<String, String> r : renames) {
                out.add(move(c, spaceId, r.getKey(), null, r.getValue()));
            }
            return out;
        });
    }

    // ---------------------------------------------------------------- direct uploads

    /** Announces an upload: a pending entry, invisible until confirmed, that reserves its size against the quota. */
    Entry announceUpload(String spaceId, Target target, long size, String contentType) {
        Paths.checkLength("path", target.path());
        if (size < 0) {
            throw ApiException.badRequest("size must not be negative");
        }
        if (size > config.maxFileBytes()) {
            throw tooLarge(config.maxFileBytes());
        }
        return sql.tx(c -> {
            lockSpace(c, spaceId);
            if (find(c, spaceId, target.path()).isPresent()) {
                throw ApiException.conflict("something named " + target.path() + " already exists");
            }
            checkQuota(c, spaceId, 1, size);
            String type = contentType != null ? contentType : guessType(target.name());
            Entry e = insert(c, spaceId, null, target, "file", "pending", 0, type, null, null);
            return Sql.one(
                            c,
                            "UPDATE storage_files SET declared_size = ? WHERE id = ? RETURNING " + Entry.COLUMNS,
                            Entry::of,
                            size,
                            e.id())
                    .orElseThrow();
        });
    }

    Entry pending(String spaceId, String id) {
        return sql.one(
                        "SELECT " + Entry.COLUMNS
                                + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'pending'",
                        Entry::of,
                        id,
                        spaceId)
                .orElseThrow(() -> ApiException.notFound("upload not found"));
    }

    /** Receives the bytes of a pending upload: at most its announced size. */
    Entry receiveUpload(String spaceId, String id, InputStream content, long declaredLength) throws IOException {
        Entry pending = pending(spaceId, id);
        long limit = pending.declaredSize();
        if (declaredLength > limit) {
            throw ApiException.badRequest("the upload announced " + limit + " bytes; this body has " + declaredLength);
        }
        Blob blob;
        try {
            blob = blobs.put(NAMESPACE, content, limit);
        } catch (BlobTooLargeException e) {
            throw ApiException.badRequest("the upload announced " + limit + " bytes; the body has more");
        }
        boolean recorded = false;
        String previous;
        try {
            previous = sql.tx(c -> {
                lockBlob(c, blob.key());
                requireBlob(blob.key());
                Entry current = Sql.one(
                                c,
                                "SELECT " + Entry.COLUMNS
                                        + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'pending' "
                                        + "FOR UPDATE",
                                Entry::of,
                                id,
                                spaceId)
                        .orElseThrow(() -> ApiException.notFound("upload not found"));
                Sql.update(
                        c,
                        "UPDATE storage_files SET size = ?, sha256 = ?, blob_key = ?, etag = ?, updated_at = now() WHERE id = ?",
                        blob.size(),
                        blob.sha256(),
                        blob.key(),
                        Entry.etagOf(blob.sha256()),
                        id);
                return current.blobKey();
            });
            recorded = true;
        } finally {
            if (!recorded) {
                release(blob.key());
            }
        }
        if (previous != null && !previous.equals(blob.key())) {
            release(previous);
        }
        return pending(spaceId, id);
    }

    /** Makes an upload a listed file once its bytes are there with the size (and SHA-256) the client names. */
    Entry confirmUpload(String spaceId, String id, long size, String sha256) {
        return sql.tx(c -> {
            lockSpace(c, spaceId);
            Entry p = Sql.one(
                            c,
                            "SELECT " + Entry.COLUMNS
                                    + " FROM storage_files WHERE id = ? AND space_id = ? AND status = 'pending' FOR UPDATE",
                            Entry::of,
                            id,
                            spaceId)
                    .orElseThrow(() -> ApiException.notFound("upload not found"));
            if (p.blobKey() == null) {
                throw ApiException.badRequest("nothing was uploaded yet: PUT the bytes to the upload URL first");
            }
            if (p.size() != size) {
                throw ApiException.badRequest("size does not match: " + p.size() + " bytes were uploaded");
            }
            if (sha256 != null && !sha256.equalsIgnoreCase(p.sha256())) {
                throw ApiException.badRequest("sha256 does not match the uploaded bytes");
            }
            if (find(c, spaceId, p.path()).isPresent()) {
                throw ApiException.conflict("something named " + p.path() + " already exists");
            }
            String parentId = ensureFolders(c, spaceId, Paths.parent(p.path()));
            return Sql.one(
                            c,
                            "UPDATE storage_files SET status = 'ready', parent_id = ?, declared_size = NULL, updated_at = now() WHERE id = ? "
                                    + "RETURNING " + Entry.COLUMNS,
                            Entry::of,
                            parentId,
                            id)
                    .orElseThrow();
        });
    }

    // ---------------------------------------------------------------- blobs and the sweep

    private static void lockSpace(Connection c, String spaceId) throws SQLException {
        Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "storage-space:" + spaceId);
    }

    private static void lockBlob(Connection c, String key) throws SQLException {
        Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "storage-blob:" + key);
    }

    private void requireBlob(String key) {
        try {
            if (!blobs.exists(key)) {
                // the sweep took these bytes between the put and this transaction: the client may simply send them
                // again
                throw ApiException.unavailable("the stored bytes were collected meanwhile; send them again");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes the blob under {@code key} when no entry refers to it any more. */
    void release(String key) {
        if (key == null) {
            return;
        }
        try {
            sql.tx(c -> {
                lockBlob(c, key);
                if (Sql.count(c, "SELECT count(*) FROM storage_files WHERE blob_key = ?", key) == 0) {
                    try {
                        blobs.delete(key);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return null;
            });
        } catch (RuntimeException e) {
            LOG.warn("blob {} was not released now; the sweep will: {}", key, e.toString());
        }
    }

    /** Removes expired unconfirmed uploads and blobs no entry refers to. */
    void sweep() {
        try {
            List<String> expired = sql.list(
                    "DELETE FROM storage_files WHERE status = 'pending' AND created_at < ? RETURNING blob_key",
                    rs -> rs.getString(1),
                    Instant.now().minusSeconds(config.uploadTtlSeconds()));
            expired.stream().filter(k -> k != null).distinct().forEach(this::release);
            Instant spareAfter = Instant.now().minus(Duration.ofSeconds(config.orphanGraceSeconds()));
            List<String> orphans = new ArrayList<>();
            List<String> candidates = new ArrayList<>();
            try (Stream<Blob> all = blobs.list(NAMESPACE + "/")) {
                for (java.util.Iterator<Blob> it = all.iterator(); it.hasNext(); ) {
                    Blob b = it.next();
                    if (b.created() != null && b.created().isBefore(spareAfter)) {
                        candidates.add(b.key());
                    }
                    if (candidates.size() == SWEEP_BATCH || (!it.hasNext() && !candidates.isEmpty())) {
                        orphans.addAll(unreferenced(candidates));
                        candidates.clear();
                    }
                }
            }
            orphans.forEach(this::release);
            if (!expired.isEmpty() || !orphans.isEmpty()) {
                LOG.info("storage sweep: {} expired uploads, {} orphan blobs removed", expired.size(), orphans.size());
            }
        } catch (Exception e) {
            LOG.warn("storage sweep failed; it runs again in {} s", config.sweepSeconds(), e);
        }
    }

    /** Of {@code keys}, those no entry refers to; one query per batch. */
    private List<String> unreferenced(List<String> keys) {
        return sql.run(c -> {
            java.sql.Array array = c.createArrayOf("text", keys.toArray());
            try {
                List<String> referenced = Sql.list(
                        c,
                        "SELECT DISTINCT blob_key FROM storage_files WHERE blob_key = ANY(?)",
                        rs -> rs.getString(1),
                        array);
                return keys.stream().filter(k -> !referenced.contains(k)).toList();
            } finally {
                array.free();
            }
        });
    }

    // ---------------------------------------------------------------- content types

    private static final Map<String, String> TYPES = Map.ofEntries(
            Map.entry("md", "text/markdown"),
            Map.entry("markdown", "text/markdown"),
            Map.entry("txt", "text/plain"),
            Map.entry("json", "application/json"),
            Map.entry("pdf", "application/pdf"),
            Map.entry("png", "image/png"),
            Map.entry("jpg", "image/jpeg"),
            Map.entry("jpeg", "image/jpeg"),
            Map.entry("gif", "image/gif"),
            Map.entry("webp", "image/webp"),
            Map.entry("svg", "image/svg+xml"),
            Map.entry("csv", "text/csv"),
            Map.entry("html", "text/html"),
            Map.entry("zip", "application/zip"),
            Map.entry("yaml", "application/yaml"),
            Map.entry("yml", "application/yaml"));

    static String guessType(String name) {
        int dot = name.lastIndexOf('.');
        if (dot > 0) {
            String t = TYPES.get(name.substring(dot + 1).toLowerCase(Locale.ROOT));
            if (t != null) {
                return t;
            }
        }
        String guessed = URLConnection.guessContentTypeFromName(name);
        return guessed != null ? guessed : "application/octet-stream";
    }
}
