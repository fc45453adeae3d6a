package dev.atrium.sessions.internal;

import dev.atrium.kernel.api.ApiException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.eclipse.jgit.dircache.DirCache;
import org.eclipse.jgit.dircache.DirCacheBuilder;
import org.eclipse.jgit.dircache.DirCacheEntry;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectChecker;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * One session's directory, {@code <data>/sessions/<id>/}: the work tree ({@code tree/}, the branch's files and nothing
 * else: no {@code .git}, no index) and a scratch directory ({@code tmp/}) where uploads land before they replace a
 * file. The session's changes are not recorded anywhere: they are what differs between the work tree and the base
 * commit's tree, found by hashing the work tree's files as git would.
 *
 * <p>Paths are relative, '/'-separated, free of empty, '.' and '..' parts and of {@code .git} in any disguise (JGit's
 * {@link ObjectChecker} with the Windows and macOS rules), and never pass through a symbolic link of the work tree: a
 * checked-out link stays a link in the tree, but no route follows it out of the work tree.
 */
final class WorkTree {

    /** Short enough that the data directory plus the path stays under the file system's PATH_MAX (4096 bytes). */
    static final int MAX_PATH_CHARS = 1024;

    /** One file of a tree or of the work tree: its mode (regular, executable, link) and its blob. */
    record Entry(FileMode mode, ObjectId id, long size) {}

    /** How a path differs from the base: {@code added}, {@code modified} or {@code deleted} (entry null). */
    record Change(String path, String kind, Entry entry) {}

    /** A path whose file and directory would collide in the commit's tree (a file {@code a} and {@code a/b}). */
    static final class Clash extends Exception {
        private static final long serialVersionUID = 1L;
        final String path;

        Clash(String path) {
            super(path, null, false, false);
            this.path = path;
        }
    }

    private final Path root;

    WorkTree(Path sessionDirectory) {
        this.root = sessionDirectory;
    }

    Path files() {
        return root.resolve("tree");
    }

    Path scratch() {
        return root.resolve("tmp");
    }

    boolean present() {
        return Files.isDirectory(files(), LinkOption.NOFOLLOW_LINKS);
    }

    // ------------------------------------------------------------------------------------------- paths

    /** What is wrong with a path a client names, or null when it may name a file of the work tree. */
    static String pathProblem(String path) {
        if (path == null || path.isEmpty()) {
            return "a path must not be empty";
        }
        if (path.length() > MAX_PATH_CHARS) {
            return "a path must be at most " + MAX_PATH_CHARS + " characters";
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == 0) {
                return "a path must not contain NUL";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= path.length() || !Character.isLowSurrogate(path.charAt(i + 1))) {
                    return "a path must not contain a lone surrogate";
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return "a path must not contain a lone surrogate";
            }
            if (c == '\\') {
                return "'" + path + "' contains '\\'; paths are '/'-separated";
            }
        }
        if (path.startsWith("/")) {
            return "'" + path + "' is absolute; paths are relative to the repository's root";
        }
        for (String segment : path.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                return "'" + path + "' has an empty, '.' or '..' part";
            }
            if (segment.getBytes(StandardCharsets.UTF_8).length > 255) {
                return "each part of a path must be at most 255 bytes";
            }
        }
        try {
            new ObjectChecker().setSafeForWindows(true).setSafeForMacOS(true).checkPath(path);
        } catch (CorruptObjectException e) {
            return "'" + path + "' cannot be stored in git: " + e.getMessage();
        }
        return null;
    }

    static String checkPath(String path) {
        String problem = pathProblem(path);
        if (problem != null) {
            throw ApiException.badRequest(problem);
        }
        return path;
    }

    /**
     * Where {@code path} lives in the work tree, after checking that no directory on the way is a link or a file.
     *
     * @throws ApiException 400 when a directory on the way is a symbolic link or a file
     */
    Path locate(String path) {
        Path at = files();
        String[] parts = checkPath(path).split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            at = at.resolve(parts[i]);
            if (Files.isSymbolicLink(at)) {
                throw ApiException.badRequest(
                        "'" + path + "' passes through a symbolic link (" + prefix(parts, i) + ")");
            }
            if (Files.exists(at, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
                throw ApiException.badRequest("'" + path + "' passes through a file (" + prefix(parts, i) + ")");
            }
        }
        return at.resolve(parts[parts.length - 1]);
    }

    private static String prefix(String[] parts, int last) {
        return String.join("/", java.util.Arrays.copyOfRange(parts, 0, last + 1));
    }

    // ------------------------------------------------------------------------------------------- files

    /** The regular file at {@code path}; 404 when there is none, 400 for a directory or a link. */
    Path readable(String path) {
        Path file = locate(path);
        if (Files.isSymbolicLink(file)) {
            throw ApiException.badRequest("'" + path + "' is a symbolic link");
        }
        if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
            throw ApiException.badRequest("'" + path + "' is a directory");
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw ApiException.notFound("file not found: " + path);
        }
        return file;
    }

    /**
     * Receives an upload into a scratch file, at most {@code maxBytes} of it, without touching the work tree (so no
     * lock is held while a client sends it).
     *
     * @throws ApiException 413 {@code PAYLOAD_TOO_LARGE} past {@code maxBytes}
     */
    Path receive(InputStream content, long maxBytes) throws IOException {
        Files.createDirectories(scratch());
        Path upload = Files.createTempFile(scratch(), "upload", ".part");
        boolean done = false;
        try {
            long written = 0;
            try (OutputStream out = Files.newOutputStream(upload, StandardOpenOption.TRUNCATE_EXISTING)) {
                byte[] buffer = new byte[65_536];
                for (int n; (n = content.read(buffer)) > 0; ) {
                    written += n;
                    if (written > maxBytes) {
                        throw new ApiException(
                                413, "PAYLOAD_TOO_LARGE", "a file of a session may be at most " + maxBytes + " bytes");
                    }
                    out.write(buffer, 0, n);
                }
            }
            done = true;
            return upload;
        } finally {
            if (!done) {
                Files.deleteIfExists(upload);
            }
        }
    }

    /**
     * Replaces (or creates) the file at {@code path} with a received upload, by a rename: a reader sees the old file
     * or the new one. An executable file stays executable.
     *
     * @return whether the file is new
     * @throws ApiException 400 when the path is a directory or passes through a link or a file
     */
    boolean place(String path, Path upload) throws IOException {
        Path file = locate(path);
        if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
            throw ApiException.badRequest("'" + path + "' is a directory");
        }
        boolean existed = Files.exists(file, LinkOption.NOFOLLOW_LINKS);
        if (existed && !Files.isSymbolicLink(file) && executable(file)) {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(upload);
            perms.addAll(EnumSet.of(
                    PosixFilePermission.OWNER_EXECUTE,
                    PosixFilePermission.GROUP_EXECUTE,
                    PosixFilePermission.OTHERS_EXECUTE));
            Files.setPosixFilePermissions(upload, perms);
        }
        Files.createDirectories(file.getParent());
        Files.move(upload, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return !existed;
    }

    /** {@link #receive} then {@link #place}, for callers that hold the session already. */
    boolean write(String path, InputStream content, long maxBytes) throws IOException {
        locate(path);
        Path upload = receive(content, maxBytes);
        try {
            return place(path, upload);
        } finally {
            Files.deleteIfExists(upload);
        }
    }

    /** Deletes the file (or link) at {@code path} and the directories it leaves empty; 404 when there is none. */
    void delete(String path) throws IOException {
        Path file = locate(path);
        if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
            throw ApiException.badRequest("'" + path + "' is a directory: delete its files");
        }
        try {
            Files.delete(file);
        } catch (NoSuchFileException e) {
            throw ApiException.notFound("file not found: " + path);
        }
        for (Path dir = file.getParent(); !dir.equals(files()); dir = dir.getParent()) {
            try (Stream<Path> left = Files.list(dir)) {
                if (left.findAny().isPresent()) {
                    break;
                }
            }
            Files.delete(dir);
        }
    }

    private static boolean executable(Path file) throws IOException {
        return Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS)
                .contains(PosixFilePermission.OWNER_EXECUTE);
    }

    // ------------------------------------------------------------------------------------------- checkout

    /**
     * Writes the tree of {@code commit} (null: an empty tree) into a new work tree. Submodules and entries whose path
     * a session could not name are not written (they stay in every commit as they are).
     *
     * @throws ApiException 409 when the tree's files add up to more than {@code maxBytes}
     */
    void checkout(Repository git, ObjectId commit, long maxBytes) throws IOException {
        Path into = files();
        Files.createDirectories(root);
        Files.createDirectory(into);
        if (commit == null) {
            return;
        }
        long total = 0;
        try (TreeWalk walk = new TreeWalk(git)) {
            walk.addTree(git.parseCommit(commit).getTree());
            walk.setRecursive(true);
            while (walk.next()) {
                FileMode mode = walk.getFileMode(0);
                String path = walk.getPathString();
                if (!materialized(mode, path)) {
                    continue;
                }
                ObjectLoader blob = git.open(walk.getObjectId(0), Constants.OBJ_BLOB);
                total += blob.getSize();
                if (total > maxBytes) {
                    throw ApiException.conflict(
                            "the branch's files add up to more than a session may check out (" + maxBytes + " bytes)");
                }
                Path file = into.resolve(path);
                Files.createDirectories(file.getParent());
                if (mode == FileMode.SYMLINK) {
                    String target = new String(blob.getBytes(), StandardCharsets.UTF_8);
                    try {
                        Files.createSymbolicLink(file, Path.of(target));
                    } catch (InvalidPathException | FileAlreadyExistsException e) {
                        throw ApiException.conflict("'" + path + "' is a symbolic link this server cannot check out");
                    }
                    continue;
                }
                try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW)) {
                    blob.copyTo(out);
                }
                if (mode == FileMode.EXECUTABLE_FILE) {
                    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
                    perms.add(PosixFilePermission.OWNER_EXECUTE);
                    perms.add(PosixFilePermission.GROUP_EXECUTE);
                    perms.add(PosixFilePermission.OTHERS_EXECUTE);
                    Files.setPosixFilePermissions(file, perms);
                }
            }
        }
    }

    /** Whether a tree entry is written into work trees: files and links at paths a session can name. */
    static boolean materialized(FileMode mode, String path) {
        return (mode == FileMode.REGULAR_FILE || mode == FileMode.EXECUTABLE_FILE || mode == FileMode.SYMLINK)
                && pathProblem(path) == null;
    }

    /** Removes the session's directory, work tree and scratch files; nothing when it is gone already. */
    void remove() throws IOException {
        removeTree(root);
    }

    static void removeTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    // ------------------------------------------------------------------------------------------- reading trees

    /** Every entry of a commit's tree, by path (submodules included); empty for null. */
    static SortedMap<String, Entry> treeOf(Repository git, ObjectId commit) throws IOException {
        SortedMap<String, Entry> out = new TreeMap<>();
        if (commit == null) {
            return out;
        }
        try (TreeWalk walk = new TreeWalk(git)) {
            walk.addTree(git.parseCommit(commit).getTree());
            walk.setRecursive(true);
            while (walk.next()) {
                out.put(walk.getPathString(), new Entry(walk.getFileMode(0), walk.getObjectId(0), -1));
            }
        }
        return out;
    }

    /** Every file and link of the work tree, by path, hashed as git hashes blobs. */
    SortedMap<String, Entry> scan() throws IOException {
        SortedMap<String, Entry> out = new TreeMap<>();
        Path base = files();
        if (!present()) {
            return out;
        }
        ObjectInserter.Formatter hasher = new ObjectInserter.Formatter();
        Files.walkFileTree(base, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                String path = relative(base, file);
                if (pathProblem(path) != null) {
                    return FileVisitResult.CONTINUE;
                }
                if (attrs.isSymbolicLink()) {
                    byte[] target = Files.readSymbolicLink(file).toString().getBytes(StandardCharsets.UTF_8);
                    out.put(path, new Entry(FileMode.SYMLINK, hasher.idFor(Constants.OBJ_BLOB, target), target.length));
                } else if (attrs.isRegularFile()) {
                    try (InputStream in = Files.newInputStream(file)) {
                        ObjectId id = hasher.idFor(Constants.OBJ_BLOB, attrs.size(), in);
                        FileMode mode = executable(file) ? FileMode.EXECUTABLE_FILE : FileMode.REGULAR_FILE;
                        out.put(path, new Entry(mode, id, attrs.size()));
                    }
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return out;
    }

    /** The entry of the file just written at {@code path}. */
    Entry scanOne(String path) throws IOException {
        Path file = locate(path);
        long size = Files.size(file);
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            ObjectId id = new ObjectInserter.Formatter().idFor(Constants.OBJ_BLOB, size, in);
            return new Entry(executable(file) ? FileMode.EXECUTABLE_FILE : FileMode.REGULAR_FILE, id, size);
        }
    }

    private static String relative(Path base, Path file) {
        StringBuilder sb = new StringBuilder();
        for (Path part : base.relativize(file)) {
            if (sb.length() > 0) {
                sb.append('/');
            }
            sb.append(part.toString());
        }
        return sb.toString();
    }

    /**
     * How the work tree differs from {@code base} (a commit's tree): files added, modified (content or mode) and
     * deleted, by path. Entries the work tree never holds (submodules, unnameable paths) are not changes.
     */
    static List<Change> changes(SortedMap<String, Entry> base, SortedMap<String, Entry> work) {
        List<Change> out = new ArrayList<>();
        for (Map.Entry<String, Entry> w : work.entrySet()) {
            Entry before = base.get(w.getKey());
            if (before == null || !materialized(before.mode(), w.getKey())) {
                if (before == null) {
                    out.add(new Change(w.getKey(), "added", w.getValue()));
                } else {
                    out.add(new Change(w.getKey(), "modified", w.getValue()));
                }
            } else if (!before.id().equals(w.getValue().id())
                    || !before.mode().equals(w.getValue().mode())) {
                out.add(new Change(w.getKey(), "modified", w.getValue()));
            }
        }
        for (Map.Entry<String, Entry> b : base.entrySet()) {
            if (materialized(b.getValue().mode(), b.getKey()) && !work.containsKey(b.getKey())) {
                out.add(new Change(b.getKey(), "deleted", null));
            }
        }
        out.sort(Comparator.comparing(Change::path));
        return out;
    }

    /** The paths whose entries differ between two trees (the files a branch changed since a base). */
    static Set<String> changedPaths(SortedMap<String, Entry> from, SortedMap<String, Entry> to) {
        Set<String> out = new HashSet<>();
        for (Map.Entry<String, Entry> e : to.entrySet()) {
            Entry before = from.get(e.getKey());
            if (before == null
                    || !before.id().equals(e.getValue().id())
                    || !before.mode().equals(e.getValue().mode())) {
                out.add(e.getKey());
            }
        }
        for (String path : from.keySet()) {
            if (!to.containsKey(path)) {
                out.add(path);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------- writing trees

    /**
     * Writes the tree of {@code onto} with {@code changes} applied, the changed files' content read from the work
     * tree into the repository.
     *
     * @throws Clash when a file and a directory of the result would share a path
     */
    ObjectId writeTree(Repository git, ObjectInserter inserter, SortedMap<String, Entry> onto, List<Change> changes)
            throws IOException, Clash {
        SortedMap<String, Entry> result = new TreeMap<>(onto);
        for (Change c : changes) {
            if (c.entry() == null) {
                result.remove(c.path());
                continue;
            }
            Path file = files().resolve(c.path());
            ObjectId id;
            if (c.entry().mode() == FileMode.SYMLINK) {
                id = inserter.insert(
                        Constants.OBJ_BLOB,
                        Files.readSymbolicLink(file).toString().getBytes(StandardCharsets.UTF_8));
            } else {
                try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
                    id = inserter.insert(Constants.OBJ_BLOB, Files.size(file), in);
                }
            }
            result.put(c.path(), new Entry(c.entry().mode(), id, c.entry().size()));
        }
        String clash = clash(result.keySet());
        if (clash != null) {
            throw new Clash(clash);
        }
        DirCache index = DirCache.newInCore();
        DirCacheBuilder builder = index.builder();
        for (Map.Entry<String, Entry> e : result.entrySet()) {
            DirCacheEntry entry = new DirCacheEntry(e.getKey());
            entry.setFileMode(e.getValue().mode());
            entry.setObjectId(e.getValue().id());
            builder.add(entry);
        }
        builder.finish();
        return index.writeTree(inserter);
    }

    /** A path of {@code paths} that is also a directory of another one, or null. */
    static String clash(Set<String> paths) {
        for (String p : paths) {
            for (int slash = p.indexOf('/'); slash > 0; slash = p.indexOf('/', slash + 1)) {
                if (paths.contains(p.substring(0, slash))) {
                    return p.substring(0, slash);
                }
            }
        }
        return null;
    }

    /**
     * Moves an active work tree onto another commit: every file takes {@code commit}'s content except the ones the
     * session changed, which keep the session's (a deletion stays a deletion). The old work tree is set aside first and
     * put back when anything fails, so no change is lost.
     */
    void rebase(Repository git, ObjectId commit, List<Change> keep, long maxBytes) throws IOException {
        Path current = files();
        Path aside = root.resolve("tree.rebasing");
        removeTree(aside);
        Files.move(current, aside, StandardCopyOption.ATOMIC_MOVE);
        try {
            checkout(git, commit, maxBytes);
            for (Change c : keep) {
                Path target = current.resolve(c.path());
                clearWay(current, c.path());
                if (c.entry() == null) {
                    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)
                            && !Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                        Files.delete(target);
                    }
                    continue;
                }
                if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                    removeTree(target);
                }
                Files.createDirectories(target.getParent());
                Files.copy(
                        aside.resolve(c.path()),
                        target,
                        StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.COPY_ATTRIBUTES,
                        LinkOption.NOFOLLOW_LINKS);
            }
        } catch (IOException | RuntimeException e) {
            removeTree(current);
            Files.move(aside, current, StandardCopyOption.ATOMIC_MOVE);
            throw e;
        }
        removeTree(aside);
    }

    /** Removes files or links that stand where a directory of {@code path} must be. */
    private static void clearWay(Path tree, String path) throws IOException {
        Path at = tree;
        String[] parts = path.split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            at = at.resolve(parts[i]);
            if (Files.exists(at, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
                Files.delete(at);
            }
        }
    }
}
