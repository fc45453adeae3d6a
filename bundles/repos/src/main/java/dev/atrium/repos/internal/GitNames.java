package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Pattern;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.lib.AnyObjectId;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectChecker;

/**
 * The one place that decides which names may enter a repository: ref and branch names (the rules of
 * {@code git check-ref-format}), revisions a client may ask for, paths the server writes into trees (JGit's
 * {@link ObjectChecker} path rules with the Windows and HFS/NTFS forms of {@code .git} included) and paths a
 * client looks up. Every {@code ...Problem} method answers null for an acceptable name, else what is wrong
 * with it, in words fit for an error message.
 */
final class GitNames {

    /** Longest ref name, in UTF-8 bytes; each component is a file name on disk. */
    static final int MAX_REF_BYTES = 1024;

    static final int MAX_COMPONENT_BYTES = 255;
    static final int MAX_BRANCH_CHARS = 200;
    static final int MAX_PATH_CHARS = 4096;
    private static final Pattern HEX_ID = Pattern.compile("[0-9a-fA-F]{4,40}");

    private GitNames() {}

    /** What is wrong with a full ref name ({@code refs/heads/main}), following {@code git check-ref-format}. */
    static String refNameProblem(String ref) {
        if (ref == null || ref.isEmpty()) {
            return "a ref name must not be empty";
        }
        String text = textProblem(ref);
        if (text != null) {
            return text;
        }
        if (!ref.startsWith(Constants.R_REFS)) {
            return "'" + ref + "' is not under refs/";
        }
        if (ref.getBytes(StandardCharsets.UTF_8).length > MAX_REF_BYTES) {
            return "a ref name must be at most " + MAX_REF_BYTES + " bytes";
        }
        if (ref.endsWith("/") || ref.endsWith(".")) {
            return "'" + ref + "' must not end with '/' or '.'";
        }
        if (ref.contains("..") || ref.contains("@{") || ref.contains("//")) {
            return "'" + ref + "' must not contain '..', '@{' or '//'";
        }
        for (int i = 0; i < ref.length(); i++) {
            char c = ref.charAt(i);
            if (c < 0x20 || c == 0x7f || c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' || c == '*'
                    || c == '[' || c == '\\') {
                return "'" + ref + "' must not contain spaces, control characters or any of ~ ^ : ? * [ \\";
            }
        }
        for (String component : ref.split("/")) {
            if (component.startsWith(".")) {
                return "no part of '" + ref + "' may begin with '.'";
            }
            if (component.endsWith(".lock")) {
                return "no part of '" + ref + "' may end with '.lock'";
            }
            if (component.equals("@")) {
                return "no part of '" + ref + "' may be '@' alone";
            }
            if (component.getBytes(StandardCharsets.UTF_8).length > MAX_COMPONENT_BYTES) {
                return "each part of a ref name must be at most " + MAX_COMPONENT_BYTES + " bytes";
            }
        }
        return null;
    }

    /** What is wrong with a branch name ({@code main}, {@code feature/x}); {@code git check-ref-format --branch}. */
    static String branchProblem(String branch) {
        if (branch == null || branch.isEmpty()) {
            return "a branch name must not be empty";
        }
        if (branch.length() > MAX_BRANCH_CHARS) {
            return "a branch name must be at most " + MAX_BRANCH_CHARS + " characters";
        }
        if (branch.startsWith("-")) {
            return "a branch name must not begin with '-'";
        }
        if (branch.equals("HEAD")) {
            return "HEAD is not a branch name";
        }
        String p = refNameProblem(Constants.R_HEADS + branch);
        return p == null ? null : p.replace("'" + Constants.R_HEADS + branch + "'", "'" + branch + "'");
    }

    /** The branch, or 400 saying what is wrong with it. */
    static String checkBranch(String branch) {
        String p = branchProblem(branch);
        if (p != null) {
            throw ApiException.badRequest("not a valid branch name: " + p);
        }
        return branch;
    }

    /**
     * What is wrong with a revision a client names: a branch, a tag, a full ref name, {@code HEAD} or a
     * (possibly abbreviated) commit id. Reflog entries ({@code main@{1}}), ancestry ({@code main~2},
     * {@code main^}), ranges and every other revision expression are refused.
     */
    static String revisionProblem(String revision) {
        if (revision == null || revision.isEmpty()) {
            return "a revision must not be empty";
        }
        if (revision.length() > 256) {
            return "a revision must be at most 256 characters";
        }
        if (revision.equals(Constants.HEAD) || HEX_ID.matcher(revision).matches()) {
            return null;
        }
        if (revision.startsWith("-")) {
            return "'" + revision + "' must not begin with '-'";
        }
        String ref = revision.startsWith(Constants.R_REFS) ? revision : Constants.R_HEADS + revision;
        if (refNameProblem(ref) != null) {
            String text = textProblem(revision);
            return text != null
                    ? text
                    : "'" + revision
                            + "' is not a branch, tag or commit id (revision expressions such as @{...}, ~, ^ and ranges are "
                            + "not accepted)";
        }
        return null;
    }

    /** Whether a revision could be a (possibly abbreviated) commit id. */
    static boolean looksLikeId(String revision) {
        return HEX_ID.matcher(revision).matches();
    }

    /** The revision, or 400 saying what is wrong with it. */
    static String checkRevision(String revision) {
        String p = revisionProblem(revision);
        if (p != null) {
            throw ApiException.badRequest(p);
        }
        return revision;
    }

    /**
     * What is wrong with a path the server is asked to write into a tree (a JSON commit, an archive entry):
     * relative, '/'-separated, no empty, '.' or '..' part, and nothing JGit's {@link ObjectChecker} refuses on
     * Windows or macOS ({@code .git} in any case or NTFS/HFS disguise, {@code GIT~1}, reserved device names and
     * characters).
     */
    static String storedPathProblem(String path) {
        if (path == null || path.isEmpty()) {
            return "a path must not be empty";
        }
        String text = textProblem(path);
        if (text != null) {
            return text;
        }
        if (path.length() > MAX_PATH_CHARS) {
            return "a path must be at most " + MAX_PATH_CHARS + " characters";
        }
        if (path.startsWith("/")) {
            return "'" + path + "' is absolute; paths are relative to the repository's root";
        }
        for (String segment : path.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                return "'" + path + "' has an empty, '.' or '..' part";
            }
            if (ntfsDotGit(segment)) {
                return "'" + path + "' has a part that is .git in disguise";
            }
        }
        try {
            strictPathChecker().checkPath(path);
        } catch (CorruptObjectException e) {
            return "'" + path + "' cannot be stored: " + e.getMessage();
        }
        return null;
    }

    /** The path, or 400 saying what is wrong with it. */
    static String checkStoredPath(String path) {
        String p = storedPathProblem(path);
        if (p != null) {
            throw ApiException.badRequest(p);
        }
        return path;
    }

    /**
     * A path a client looks up in a tree: a leading or trailing '/' is dropped (the root is the empty path);
     * no empty, '.' or '..' part; no NUL or lone surrogate. 400 otherwise.
     */
    static String checkLookupPath(String path) {
        if (path == null) {
            return "";
        }
        String text = textProblem(path);
        if (text != null) {
            throw ApiException.badRequest(text);
        }
        String p = path.startsWith("/") ? path.substring(1) : path;
        if (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.length() > MAX_PATH_CHARS) {
            throw ApiException.badRequest("path is too long (at most " + MAX_PATH_CHARS + " characters)");
        }
        for (String segment : p.isEmpty() ? new String[0] : p.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw ApiException.badRequest("'" + path + "' is not a valid path: it has an empty, '.' or '..' part");
            }
        }
        return p;
    }

    /** What is wrong with the name of one tree entry for an export that someone will unpack; null when safe. */
    static String entryNameProblem(String name) {
        if (name.isEmpty()
                || name.equals(".")
                || name.equals("..")
                || name.indexOf('/') >= 0
                || name.indexOf('\\') >= 0
                || name.indexOf('\0') >= 0) {
            return "'" + name + "' is not a plain file name";
        }
        if (ntfsDotGit(name)) {
            return "'" + name + "' is .git in disguise";
        }
        try {
            fetchChecker()
                    .checkPathSegment(
                            name.getBytes(StandardCharsets.UTF_8), 0, name.getBytes(StandardCharsets.UTF_8).length);
        } catch (CorruptObjectException e) {
            return "'" + name + "': " + e.getMessage();
        }
        return null;
    }

    /**
     * NUL, lone surrogates (which cannot be written as UTF-8 and would be stored as '?') and other text no
     * Git name may hold.
     */
    static String textProblem(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0) {
                return "a name must not contain NUL";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return "a name must be valid Unicode: it holds a lone surrogate (U+"
                        + Integer.toHexString(c).toUpperCase(Locale.ROOT) + ")";
            }
            if (Character.isLowSurrogate(c)) {
                return "a name must be valid Unicode: it holds a lone surrogate (U+"
                        + Integer.toHexString(c).toUpperCase(Locale.ROOT) + ")";
            }
        }
        return null;
    }

    /**
     * {@code .git} followed by an NTFS alternate data stream ({@code .git::$INDEX_ALLOCATION}), which git fsck
     * refuses and JGit's checker only refuses when checking for Windows.
     */
    static boolean ntfsDotGit(String segment) {
        String s = segment.toLowerCase(Locale.ROOT);
        return s.startsWith(".git:") || s.startsWith("git~1:");
    }

    /**
     * The checker for objects that arrive as Git history (push, bundle, remote import, fork): everything git
     * fsck --strict refuses, including the HFS and NTFS disguises of {@code .git}. Windows device names and
     * reserved characters are accepted here: real histories carry files such as {@code aux.c}.
     */
    static ObjectChecker newObjectChecker() {
        return fetchChecker();
    }

    private static ObjectChecker fetchChecker() {
        return new FsckChecker().setSafeForMacOS(true);
    }

    private static ObjectChecker strictPathChecker() {
        return new ObjectChecker().setSafeForWindows(true).setSafeForMacOS(true);
    }

    /** JGit's checker plus the NTFS alternate-stream forms of {@code .git} in tree entries. */
    private static final class FsckChecker extends ObjectChecker {
        @Override
        public void checkTree(AnyObjectId id, byte[] raw) throws CorruptObjectException {
            super.checkTree(id, raw);
            int p = 0;
            while (p < raw.length) {
                int sp = p;
                while (sp < raw.length && raw[sp] != ' ') {
                    sp++;
                }
                int nul = sp + 1;
                while (nul < raw.length && raw[nul] != 0) {
                    nul++;
                }
                String name = new String(raw, sp + 1, Math.max(0, nul - sp - 1), StandardCharsets.UTF_8);
                if (ntfsDotGit(name)) {
                    throw new CorruptObjectException("invalid name '" + name + "' (.git with an NTFS stream)"
                            + (id == null ? "" : " in tree " + id.name()));
                }
                p = nul + 1 + Constants.OBJECT_ID_LENGTH;
            }
        }
    }
}
