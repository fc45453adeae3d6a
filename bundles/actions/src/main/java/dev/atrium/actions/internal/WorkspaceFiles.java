package dev.atrium.actions.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * What the built-in actions do to a job's workspace, from this machine's side of its mount: the checkout, and the
 * files of artifacts and caches in and out. The job's commands could have put symbolic links anywhere in the
 * workspace, so nothing here follows one: no component of a path used may be a link, files are written without
 * following links, and links are neither collected nor extracted. The caller freezes the job's container while this
 * works ({@link dev.atrium.runner.api.JobContainer#pause}), so no process of the job can swap a checked directory
 * for a link in between.
 */
final class WorkspaceFiles {

    private final Path root;
    private final Path realRoot;
    private final int uid;
    private final int gid;

    WorkspaceFiles(Path root) throws IOException {
        this.root = root;
        this.realRoot = root.toRealPath();
        this.uid = (Integer) Files.getAttribute(root, "unix:uid");
        this.gid = (Integer) Files.getAttribute(root, "unix:gid");
    }

    /** A path the workflow named, inside the workspace, or an exception saying it is not. */
    Path inside(String relative) throws IOException {
        String r = relative == null ? "" : relative.strip();
        if (r.startsWith(dev.atrium.runner.api.ContainerSpec.WORKSPACE + "/")) {
            r = r.substring(dev.atrium.runner.api.ContainerSpec.WORKSPACE.length() + 1);
        } else if (r.equals(dev.atrium.runner.api.ContainerSpec.WORKSPACE)) {
            r = "";
        }
        Path p = root.resolve(r).normalize();
        if (!p.startsWith(root)) {
            throw new IOException("the path " + relative + " is outside the workspace");
        }
        return p;
    }

    /**
     * {@code p}, when no component of it below the workspace is a symbolic link (the caller has frozen the job's
     * processes, so none can become one meanwhile); else an exception naming the link.
     */
    private Path unlinked(Path p) throws IOException {
        Path at = root;
        for (Path part : root.relativize(p)) {
            at = at.resolve(part);
            if (Files.isSymbolicLink(at)) {
                throw new IOException(
                        root.relativize(at) + " is a symbolic link: nothing is read or written through it");
            }
        }
        return p;
    }

    /** Creates the directories up to {@code dir}, refusing one that is a link or leads out of the workspace. */
    private Path directory(Path dir) throws IOException {
        Path at = root;
        for (Path part : root.relativize(dir)) {
            at = at.resolve(part);
            if (Files.isSymbolicLink(at)) {
                throw new IOException(root.relativize(at) + " is a symbolic link: nothing is written through it");
            }
            if (!Files.exists(at, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(at);
                own(at);
            }
        }
        if (!at.toRealPath().startsWith(realRoot)) {
            throw new IOException(root.relativize(dir) + " leads out of the workspace");
        }
        return at;
    }

    private void write(Path file, InputStream content, boolean executable) throws IOException {
        directory(file.getParent());
        Files.deleteIfExists(file); // a link left there is removed, not followed
        try (OutputStream out = Files.newOutputStream(
                file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            content.transferTo(out);
        }
        if (executable) {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            perms.add(PosixFilePermission.OWNER_EXECUTE);
            perms.add(PosixFilePermission.GROUP_EXECUTE);
            perms.add(PosixFilePermission.OTHERS_EXECUTE);
            Files.setPosixFilePermissions(file, perms);
        }
        own(file);
    }

    private void own(Path p) throws IOException {
        Files.setAttribute(p, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    /** Writes the tree of {@code commit} under {@code into}; returns the files written. */
    int checkout(org.eclipse.jgit.lib.Repository db, String commit, Path into) throws IOException {
        int n = 0;
        try (RevWalk walk = new RevWalk(db);
                TreeWalk tw = new TreeWalk(db)) {
            RevCommit c = walk.parseCommit(ObjectId.fromString(commit));
            tw.addTree(c.getTree());
            tw.setRecursive(true);
            while (tw.next()) {
                FileMode mode = tw.getFileMode(0);
                if (mode.getObjectType() != Constants.OBJ_BLOB || mode == FileMode.SYMLINK) {
                    continue; // submodules are not fetched; links are not made on this side of the mount
                }
                try (InputStream in = db.open(tw.getObjectId(0)).openStream()) {
                    write(into.resolve(tw.getPathString()), in, mode == FileMode.EXECUTABLE_FILE);
                }
                n++;
            }
        }
        return n;
    }

    /** Regular files matched by {@code patterns} (one per line, globs, {@code !} excludes), relative to the workspace. */
    Map<String, Path> collect(List<String> patterns) throws IOException {
        TreeMap<String, Path> found = new TreeMap<>();
        List<PathMatcher> excludes = new ArrayList<>();
        for (String p : patterns) {
            if (p.startsWith("!")) {
                excludes.add(FileSystems.getDefault().getPathMatcher("glob:" + inside(p.substring(1))));
            }
        }
        for (String p : patterns) {
            if (p.isBlank() || p.startsWith("!")) {
                continue;
            }
            Path base = inside(p);
            boolean glob = p.contains("*") || p.contains("?") || p.contains("[");
            if (!glob && Files.isRegularFile(base, LinkOption.NOFOLLOW_LINKS) && unlinked(base.getParent()) != null) {
                found.put(base.getFileName().toString(), base);
                continue;
            }
            Path walkFrom = glob ? staticPrefix(base) : base;
            PathMatcher m = glob ? FileSystems.getDefault().getPathMatcher("glob:" + base) : null;
            if (!Files.isDirectory(walkFrom, LinkOption.NOFOLLOW_LINKS)
                    || unlinked(walkFrom) == null
                    || !walkFrom.toRealPath().startsWith(realRoot)) {
                continue;
            }
            Path relativeTo = glob ? walkFrom : base;
            Files.walkFileTree(walkFrom, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()
                            && (m == null || m.matches(file))
                            && excludes.stream().noneMatch(x -> x.matches(file))) {
                        found.put(relativeTo.relativize(file).toString(), file);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        return found;
    }

    private Path staticPrefix(Path glob) {
        Path at = root;
        for (Path part : root.relativize(glob)) {
            String s = part.toString();
            if (s.contains("*") || s.contains("?") || s.contains("[")) {
                break;
            }
            at = at.resolve(part);
        }
        return at;
    }

    /** Zips the files (name in the archive to file) to {@code out}; returns the bytes of the files. */
    static long zip(Map<String, Path> files, OutputStream out) throws IOException {
        long total = 0;
        try (ZipOutputStream zip = new ZipOutputStream(out)) {
            for (var f : files.entrySet()) {
                zip.putNextEntry(new ZipEntry(f.getKey()));
                try (InputStream in = Files.newInputStream(f.getValue(), LinkOption.NOFOLLOW_LINKS)) {
                    total += in.transferTo(zip);
                }
                zip.closeEntry();
            }
        }
        return total;
    }

    /** Extracts a ZIP under {@code into}; an entry that would land outside it is refused. Returns the files written. */
    int unzip(InputStream in, Path into) throws IOException {
        int n = 0;
        try (ZipInputStream zip = new ZipInputStream(in)) {
            for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                Path target = into.resolve(e.getName()).normalize();
                if (!target.startsWith(into) || !target.startsWith(root)) {
                    throw new IOException("the archive's entry " + e.getName() + " lies outside its directory");
                }
                if (e.isDirectory()) {
                    directory(target);
                } else {
                    write(target, zip, false);
                    n++;
                }
            }
        }
        return n;
    }

    /** Removes the workspace, following no link. */
    static void delete(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
