package dev.atrium.actions.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.TreeSet;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * One file out of an artifact's ZIP, read as the archive streams by: the archive is never held in memory, and the file
 * only up to the caller's limit (a small archive may inflate to far more).
 */
final class ArtifactZip {

    /** How many names an error lists: enough to see what the artifact holds, not a wall of text. */
    static final int NAMES_SHOWN = 20;

    private ArtifactZip() {}

    /**
     * The bytes of the file at {@code path} in the archive, or of its only file when {@code path} is null or empty.
     *
     * @throws IOException when there is no such file (naming the files there are), the file is larger than
     *     {@code maxBytes}, or an entry's name leads out of the archive ({@code ..}, an absolute path)
     */
    static byte[] read(InputStream archive, String path, long maxBytes) throws IOException {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must not be negative");
        }
        String wanted = path == null ? "" : clean(path);
        if (!wanted.isEmpty() && !safe(wanted)) {
            throw new IOException("a path inside an artifact is relative and has no .. in it: " + path);
        }
        TreeSet<String> names = new TreeSet<>(); // the first few, by name: an archive may hold very many
        int files = 0;
        byte[] only = null;
        ZipInputStream zip = new ZipInputStream(archive);
        for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
            String name = clean(e.getName());
            if (!safe(name)) {
                throw new IOException("the artifact's entry " + e.getName() + " leads outside it");
            }
            if (e.isDirectory() || name.isEmpty()) {
                continue;
            }
            files++;
            names.add(name);
            if (names.size() > NAMES_SHOWN) {
                names.pollLast();
            }
            if (!wanted.isEmpty() && name.equals(wanted)) {
                return bounded(zip, e, name, maxBytes);
            }
            if (wanted.isEmpty() && files == 1) {
                only = bounded(zip, e, name, maxBytes);
            }
        }
        if (wanted.isEmpty()) {
            if (files == 1) {
                return only;
            }
            throw new IOException(
                    files == 0
                            ? "the artifact holds no files"
                            : "the artifact holds " + files + " files, so its path must be named: "
                                    + listed(names, files));
        }
        throw new IOException("the artifact has no file " + wanted + "; "
                + (files == 0 ? "it holds no files" : "it holds " + listed(names, files)));
    }

    /** The entry's bytes, refused past {@code maxBytes} whether or not the archive states the size up front. */
    private static byte[] bounded(ZipInputStream zip, ZipEntry e, String name, long maxBytes) throws IOException {
        long limit = Math.min(maxBytes, Integer.MAX_VALUE - 16L);
        if (e.getSize() > limit) {
            throw tooLarge(name, maxBytes);
        }
        byte[] bytes = zip.readNBytes((int) limit + 1);
        if (bytes.length > limit) {
            throw tooLarge(name, maxBytes);
        }
        return bytes;
    }

    private static IOException tooLarge(String name, long maxBytes) {
        return new IOException("the artifact's file " + name + " is larger than " + maxBytes + " bytes");
    }

    /** A name as the archive or the caller may write it: {@code ./dist/a.js} and {@code dist/a.js} are one file. */
    private static String clean(String name) {
        String n = name.strip();
        while (n.startsWith("./")) {
            n = n.substring(2);
        }
        return n;
    }

    /** Relative, with no {@code ..} segment, in either separator (an archive made on Windows uses backslashes). */
    static boolean safe(String name) {
        if (name.startsWith("/") || name.startsWith("\\") || name.indexOf('\0') >= 0 || name.matches("^[A-Za-z]:.*")) {
            return false;
        }
        for (String segment : name.split("[/\\\\]", -1)) {
            if (segment.equals("..")) {
                return false;
            }
        }
        return true;
    }

    private static String listed(java.util.SortedSet<String> names, int files) {
        String shown = String.join(", ", names);
        return files > names.size() ? shown + " and " + (files - names.size()) + " more" : shown;
    }
}
