package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.internal.GitWrites.FileChange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.io.input.BoundedInputStream;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.treewalk.TreeWalk;

/** Tree exports as tar.gz or zip, written as they are read, and archive uploads read back into files (tar by commons-compress). */
final class Archives {

    static final int MAX_FILES = 100_000;

    private Archives() {}

    /**
     * 409 when the tree holds an entry that would unpack outside its directory or into a {@code .git} (a tree
     * that came in before names were checked): such an archive is never produced.
     */
    static void checkExportable(Repository git, ObjectId tree) {
        try (TreeWalk tw = new TreeWalk(git)) {
            tw.addTree(tree);
            tw.setRecursive(false);
            while (tw.next()) {
                String problem = GitNames.entryNameProblem(tw.getNameString());
                if (problem != null) {
                    throw ApiException.conflict("the tree cannot be exported safely: the entry " + tw.getPathString()
                            + " is unsafe (" + problem + ")");
                }
                if (tw.isSubtree()) {
                    tw.enterSubtree();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String entryName(String prefix, TreeWalk tw) throws IOException {
        for (String segment : tw.getPathString().split("/", -1)) {
            if (GitNames.entryNameProblem(segment) != null) {
                throw new IOException("refusing to export the unsafe entry " + tw.getPathString());
            }
        }
        return prefix + tw.getPathString();
    }

    /** Streams the tree of {@code commit} under the directory {@code prefix}; see {@link #checkExportable}. */
    static void export(Repository git, ObjectId tree, String prefix, String format, long mtimeSeconds, OutputStream out)
            throws IOException {
        if (format.equals("zip")) {
            try (ZipOutputStream zip = new ZipOutputStream(out);
                    TreeWalk tw = walk(git, tree)) {
                while (tw.next()) {
                    ZipEntry e = new ZipEntry(entryName(prefix, tw));
                    e.setTime(mtimeSeconds * 1000);
                    zip.putNextEntry(e);
                    git.open(tw.getObjectId(0)).copyTo(zip);
                    zip.closeEntry();
                }
            }
            return;
        }
        GZIPOutputStream gz = new GZIPOutputStream(out, 1 << 16);
        // not closed: that would close the response, which the caller owns
        TarArchiveOutputStream tar = new TarArchiveOutputStream(gz, StandardCharsets.UTF_8.name());
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_GNU);
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        FileTime mtime = FileTime.from(mtimeSeconds, TimeUnit.SECONDS);
        try (TreeWalk tw = walk(git, tree)) {
            while (tw.next()) {
                FileMode mode = tw.getFileMode(0);
                String name = entryName(prefix, tw);
                ObjectLoader loader = git.open(tw.getObjectId(0));
                TarArchiveEntry entry;
                if (FileMode.SYMLINK.equals(mode)) {
                    entry = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
                    entry.setLinkName(new String(loader.getCachedBytes(), StandardCharsets.UTF_8));
                    entry.setMode(0120777);
                } else {
                    entry = new TarArchiveEntry(name);
                    entry.setSize(loader.getSize());
                    entry.setMode(FileMode.EXECUTABLE_FILE.equals(mode) ? 0100755 : 0100644);
                }
                entry.setLastModifiedTime(mtime);
                tar.putArchiveEntry(entry);
                if (!FileMode.SYMLINK.equals(mode)) {
                    loader.copyTo(tar);
                }
                tar.closeArchiveEntry();
            }
        }
        tar.finish();
        gz.finish();
        gz.flush();
    }

    private static TreeWalk walk(Repository git, ObjectId tree) throws IOException {
        TreeWalk tw = new TreeWalk(git);
        tw.addTree(tree);
        tw.setRecursive(true);
        return tw;
    }

    /**
     * The regular files of a zip or tar.gz upload. A single directory that holds everything (as archives of a
     * project usually have) is stripped. Bounded in files and bytes; anything else is 400.
     */
    static List<FileChange> read(InputStream in, String format, long maxBytes) {
        try {
            return unpack(in, format, maxBytes);
        } catch (IOException | IllegalArgumentException e) {
            // the bytes came from the client: a damaged, truncated or mislabelled archive is its error (ZipInputStream
            // reports an entry name that is not UTF-8 with an IllegalArgumentException)
            throw ApiException.badRequest("the body is not a readable " + (format.equals("zip") ? "zip" : "tar.gz")
                    + " archive: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        }
    }

    private static List<FileChange> unpack(InputStream in, String format, long maxBytes) throws IOException {
        List<FileChange> files = new ArrayList<>();
        long[] total = {0};
        if (format.equals("zip")) {
            try (ZipInputStream zip = new ZipInputStream(in)) {
                ZipEntry e;
                while ((e = zip.getNextEntry()) != null) {
                    if (!e.isDirectory()) {
                        files.add(new FileChange(e.getName(), readBounded(zip, maxBytes, total), false));
                    }
                    limit(files);
                }
            }
        } else {
            // pax and GNU long names, ustar prefixes and base-256 sizes are the library's; names must be valid UTF-8.
            // The library reads a pax header whole into memory: the tar's own bytes are bounded too, headers included.
            InputStream raw = BoundedInputStream.builder()
                    .setInputStream(new GZIPInputStream(in, 1 << 16))
                    .setMaxCount(2 * maxBytes + (16 << 20))
                    .setOnMaxCount((max, count) -> {
                        throw ApiException.badRequest("the archive unpacks to more than " + maxBytes + " bytes");
                    })
                    .get();
            TarArchiveInputStream tar = new TarArchiveInputStream(raw, StandardCharsets.UTF_8.name());
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                byte type = e.getLinkFlag();
                if (type == TarConstants.LF_NORMAL || type == TarConstants.LF_OLDNORM) {
                    files.add(
                            new FileChange(e.getName(), readBounded(tar, maxBytes, total), (e.getMode() & 0100) != 0));
                    limit(files);
                }
                // directories and links carry no file content
            }
        }
        return stripCommonDirectory(files);
    }

    private static void limit(List<FileChange> files) {
        if (files.size() > MAX_FILES) {
            throw ApiException.badRequest("the archive holds more than " + MAX_FILES + " files");
        }
    }

    private static List<FileChange> stripCommonDirectory(List<FileChange> files) {
        if (files.isEmpty()) {
            throw ApiException.badRequest("the archive holds no files");
        }
        List<FileChange> cleaned = new ArrayList<>();
        for (FileChange f : files) {
            String p = f.path().startsWith("./") ? f.path().substring(2) : f.path();
            cleaned.add(new FileChange(p, f.content(), f.executable()));
        }
        String first = cleaned.get(0).path();
        int slash = first.indexOf('/');
        if (slash > 0) {
            String dir = first.substring(0, slash + 1);
            if (cleaned.stream().allMatch(f -> f.path().startsWith(dir))) {
                cleaned.replaceAll(f -> new FileChange(f.path().substring(dir.length()), f.content(), f.executable()));
            }
        }
        for (FileChange f : cleaned) {
            String problem = GitNames.storedPathProblem(f.path());
            if (problem != null) {
                throw ApiException.badRequest("the archive holds an unusable path: " + problem);
            }
        }
        return cleaned;
    }

    private static byte[] readBounded(InputStream in, long maxBytes, long[] total) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[1 << 16];
        int n;
        while ((n = in.read(buf)) > 0) {
            total[0] += n;
            if (total[0] > maxBytes) {
                throw ApiException.badRequest("the archive unpacks to more than " + maxBytes + " bytes");
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }
}
