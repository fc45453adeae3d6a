package dev.atrium.repos.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.treewalk.TreeWalk;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.internal.GitWrites.FileChange;

/** Tree exports as tar.gz or zip, written as they are read, and archive uploads read back into files. */
final class Archives {

    static final int MAX_FILES = 100_000;

    private Archives() {
    }

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
                    throw ApiException.conflict("the tree cannot be exported safely: the entry " + tw.getPathString() + " is unsafe ("
                            + problem + ")");
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
            try (ZipOutputStream zip = new ZipOutputStream(out); TreeWalk tw = walk(git, tree)) {
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
        try (TreeWalk tw = walk(git, tree)) {
            while (tw.next()) {
                FileMode mode = tw.getFileMode(0);
                String name = entryName(prefix, tw);
                ObjectLoader loader = git.open(tw.getObjectId(0));
                if (FileMode.SYMLINK.equals(mode)) {
                    String target = new String(loader.getCachedBytes(), StandardCharsets.UTF_8);
                    tarHeader(gz, name, 0, 0777, '2', target, mtimeSeconds);
                } else {
                    long size = loader.getSize();
                    tarHeader(gz, name, size, FileMode.EXECUTABLE_FILE.equals(mode) ? 0755 : 0644, '0', "", mtimeSeconds);
                    loader.copyTo(gz);
                    pad(gz, size);
                }
            }
        }
        gz.write(new byte[1024]);
        gz.finish();
        gz.flush();
    }

    private static TreeWalk walk(Repository git, ObjectId tree) throws IOException {
        TreeWalk tw = new TreeWalk(git);
        tw.addTree(tree);
        tw.setRecursive(true);
        return tw;
    }

    private static void pad(OutputStream out, long size) throws IOException {
        int rest = (int) (size % 512);
        if (rest != 0) {
            out.write(new byte[512 - rest]);
        }
    }

    /** A ustar header; names longer than ustar holds go first as a GNU long-name entry. */
    private static void tarHeader(OutputStream out, String name, long size, int mode, char type, String link, long mtime)
            throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        if (nameBytes.length > 100) {
            byte[] longName = new byte[nameBytes.length + 1];
            System.arraycopy(nameBytes, 0, longName, 0, nameBytes.length);
            tarHeader(out, "././@LongLink", longName.length, 0644, 'L', "", mtime);
            out.write(longName);
            pad(out, longName.length);
        }
        byte[] h = new byte[512];
        put(h, 0, 100, nameBytes);
        octal(h, 100, 8, mode);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        octal(h, 124, 12, size);
        octal(h, 136, 12, mtime);
        h[156] = (byte) type;
        put(h, 157, 100, link.getBytes(StandardCharsets.UTF_8));
        put(h, 257, 6, "ustar\0".getBytes(StandardCharsets.US_ASCII));
        put(h, 263, 2, "00".getBytes(StandardCharsets.US_ASCII));
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        octal(h, 148, 7, sum);
        out.write(h);
    }

    private static void put(byte[] h, int at, int len, byte[] value) {
        System.arraycopy(value, 0, h, at, Math.min(len, value.length));
    }

    private static void octal(byte[] h, int at, int len, long value) {
        String s = Long.toOctalString(value);
        if (s.length() > len - 1) {
            throw new IllegalArgumentException("value too large for a tar header: " + value);
        }
        String padded = "0".repeat(len - 1 - s.length()) + s;
        put(h, at, len - 1, padded.getBytes(StandardCharsets.US_ASCII));
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
            throw ApiException.badRequest("the body is not a readable " + (format.equals("zip") ? "zip" : "tar.gz") + " archive: "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        }
    }

    private static List<FileChange> unpack(InputStream in, String format, long maxBytes) throws IOException {
        List<FileChange> files = new ArrayList<>();
        long[] total = { 0 };
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
            InputStream tar = new GZIPInputStream(in, 1 << 16);
            String longName = null;
            byte[] header = new byte[512];
            while (true) {
                if (!readFully(tar, header)) {
                    break;
                }
                if (isZero(header)) {
                    break;
                }
                String name = longName != null ? longName : cString(header, 0, 100);
                longName = null;
                String prefix = cString(header, 345, 155);
                if (!prefix.isEmpty()) {
                    name = prefix + "/" + name;
                }
                long size = parseOctal(header, 124, 12);
                int mode = (int) parseOctal(header, 100, 8);
                char type = (char) header[156];
                byte[] body = readBounded(new Bounded(tar, size), maxBytes, total);
                pad(tar, size);
                if (type == 'L') {
                    longName = cString(body, 0, body.length);
                } else if (type == '0' || type == '\0') {
                    files.add(new FileChange(name, body, (mode & 0100) != 0));
                    limit(files);
                }
                // directories, links and pax headers carry no file content
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

    private static void pad(InputStream in, long size) throws IOException {
        int rest = (int) (size % 512);
        if (rest != 0) {
            in.skipNBytes(512 - rest);
        }
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

    private static boolean readFully(InputStream in, byte[] b) throws IOException {
        int off = 0;
        while (off < b.length) {
            int n = in.read(b, off, b.length - off);
            if (n < 0) {
                if (off == 0) {
                    return false;
                }
                throw new EOFException("truncated tar header");
            }
            off += n;
        }
        return true;
    }

    private static boolean isZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** A NUL-terminated UTF-8 field; malformed UTF-8 is refused rather than turned into U+FFFD. */
    private static String cString(byte[] b, int at, int len) throws IOException {
        int end = at;
        while (end < at + len && end < b.length && b[end] != 0) {
            end++;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b, at, end - at)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new IOException("an entry name is not valid UTF-8");
        }
    }

    private static long parseOctal(byte[] b, int at, int len) throws IOException {
        String s = cString(b, at, len).trim();
        if (s.isEmpty()) {
            return 0;
        }
        try {
            long v = Long.parseLong(s, 8);
            if (v < 0) {
                throw new NumberFormatException("negative");
            }
            return v;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("the archive is not a valid tar.gz");
        }
    }

    /** At most {@code size} bytes of a stream, leaving the rest unread. */
    private static final class Bounded extends InputStream {
        private final InputStream in;
        private long left;

        Bounded(InputStream in, long size) {
            this.in = in;
            this.left = size;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                return -1;
            }
            int b = in.read();
            if (b < 0) {
                throw new EOFException("truncated tar entry");
            }
            left--;
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            if (left <= 0) {
                return -1;
            }
            int n = in.read(buf, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new EOFException("truncated tar entry");
            }
            left -= n;
            return n;
        }
    }
}
