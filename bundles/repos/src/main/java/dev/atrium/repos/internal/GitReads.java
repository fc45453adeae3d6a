package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jgit.api.BlameCommand;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.blame.BlameResult;
import org.eclipse.jgit.diff.DiffEntry;
import org.eclipse.jgit.diff.DiffFormatter;
import org.eclipse.jgit.diff.Edit;
import org.eclipse.jgit.diff.RawText;
import org.eclipse.jgit.diff.RawTextComparator;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevTree;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.revwalk.filter.AndRevFilter;
import org.eclipse.jgit.revwalk.filter.AuthorRevFilter;
import org.eclipse.jgit.revwalk.filter.CommitTimeRevFilter;
import org.eclipse.jgit.revwalk.filter.RevFilter;
import org.eclipse.jgit.treewalk.AbstractTreeIterator;
import org.eclipse.jgit.treewalk.CanonicalTreeParser;
import org.eclipse.jgit.treewalk.EmptyTreeIterator;
import org.eclipse.jgit.treewalk.TreeWalk;
import org.eclipse.jgit.treewalk.filter.AndTreeFilter;
import org.eclipse.jgit.treewalk.filter.PathFilterGroup;
import org.eclipse.jgit.treewalk.filter.TreeFilter;

/**
 * Read-only views of a repository's history and trees, shaped for JSON.
 *
 * <p>Why one class of about 630 lines: every read view of the repositories routes (commits, log, trees, blobs, diffs,
 * blame, branches, search) over one JGit repository handle, each a few dozen lines.
 */
final class GitReads {

    /** Blobs larger than this are not inlined into JSON; ask for the raw form instead. */
    static final long MAX_JSON_BLOB = 10L << 20;

    private static final int MAX_PATCH_BYTES = 5 << 20;
    private static final int MAX_SEARCH_FILES = 20_000;
    private static final long MAX_SEARCH_BLOB = 1L << 20;

    private GitReads() {}

    /**
     * The commit a branch, tag, full ref name, HEAD or (abbreviated) commit id names; 400 for anything else
     * ({@link GitNames#revisionProblem}). A commit id counts only when a ref of this repository reaches it: what
     * a force push or a deleted branch left behind (still in the reflog or the object store) is 404, as a missing
     * one is.
     */
    static RevCommit commit(Repository git, RevWalk walk, String ref) {
        GitNames.checkRevision(ref);
        try {
            boolean byId = ref.length() == Constants.OBJECT_ID_STRING_LENGTH && GitNames.looksLikeId(ref);
            ObjectId id = byId ? ObjectId.fromString(ref.toLowerCase(java.util.Locale.ROOT)) : byName(git, ref);
            if (id == null && GitNames.looksLikeId(ref)) {
                id = byAbbreviation(git, ref);
                byId = id != null;
            }
            if (id == null) {
                throw ApiException.notFound("ref " + ref + " not found");
            }
            org.eclipse.jgit.revwalk.RevObject o = walk.peel(walk.parseAny(id));
            if (!(o instanceof RevCommit c)) {
                throw ApiException.notFound("ref " + ref + " does not name a commit");
            }
            if (byId && !reachable(git, c)) {
                throw ApiException.notFound("ref " + ref + " not found");
            }
            return c;
        } catch (org.eclipse.jgit.errors.MissingObjectException e) {
            throw ApiException.notFound("ref " + ref + " not found");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A ref by the names git would try for it (tags before branches, as git does), or null. */
    private static ObjectId byName(Repository git, String name) throws IOException {
        List<String> candidates = name.equals(Constants.HEAD) || name.startsWith(Constants.R_REFS)
                ? List.of(name)
                : List.of(Constants.R_REFS + name, Constants.R_TAGS + name, Constants.R_HEADS + name);
        for (String candidate : candidates) {
            Ref r = git.exactRef(candidate);
            if (r != null && r.getObjectId() != null) {
                return r.getObjectId();
            }
        }
        return null;
    }

    private static ObjectId byAbbreviation(Repository git, String hex) throws IOException {
        try (ObjectReader reader = git.newObjectReader()) {
            java.util.Collection<ObjectId> matches = reader.resolve(
                    org.eclipse.jgit.lib.AbbreviatedObjectId.fromString(hex.toLowerCase(java.util.Locale.ROOT)));
            if (matches.size() > 1) {
                throw ApiException.badRequest("'" + hex + "' is ambiguous: give more of the commit id");
            }
            return matches.isEmpty() ? null : matches.iterator().next();
        }
    }

    /** Whether some ref of the repository reaches {@code target}. */
    static boolean reachable(Repository git, RevCommit target) throws IOException {
        try (RevWalk w = new RevWalk(git)) {
            w.setRetainBody(false);
            RevCommit wanted = w.parseCommit(target);
            for (Ref r : git.getRefDatabase().getRefs()) {
                if (r.getObjectId() == null) {
                    continue;
                }
                try {
                    org.eclipse.jgit.revwalk.RevObject tip = w.peel(w.parseAny(r.getObjectId()));
                    if (tip instanceof RevCommit c) {
                        if (c.equals(wanted)) {
                            return true;
                        }
                        w.markStart(c);
                    }
                } catch (org.eclipse.jgit.errors.MissingObjectException partial) {
                    // a tip a blobless import did not bring: nothing to walk from it
                }
            }
            for (RevCommit c; (c = w.next()) != null; ) {
                if (c.equals(wanted)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** 400 unless the path is a plain relative path inside the tree; see {@link GitNames#checkLookupPath}. */
    static String checkPath(String path) {
        return GitNames.checkLookupPath(path);
    }

    static Map<String, Object> person(PersonIdent p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", p.getName());
        m.put("email", p.getEmailAddress());
        m.put("date", p.getWhenAsInstant().toString());
        return m;
    }

    static Map<String, Object> commitJson(RevCommit c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sha", c.name());
        m.put("message", c.getFullMessage());
        m.put("title", c.getShortMessage());
        m.put("author", person(c.getAuthorIdent()));
        m.put("committer", person(c.getCommitterIdent()));
        List<String> parents = new ArrayList<>();
        for (RevCommit p : c.getParents()) {
            parents.add(p.name());
        }
        m.put("parents", parents);
        return m;
    }

    /** Filters of a commit listing. */
    record LogQuery(String ref, String path, String author, Instant since, Instant until, int limit, int offset) {}

    static Map<String, Object> log(Repository git, String defaultBranch, LogQuery q) {
        try (RevWalk walk = new RevWalk(git)) {
            Map<String, Object> body = new LinkedHashMap<>();
            String ref = q.ref() == null || q.ref().isBlank() ? defaultBranch : q.ref();
            List<Map<String, Object>> commits = new ArrayList<>();
            if (q.ref() == null && git.resolve(Constants.R_HEADS + defaultBranch) == null) {
                body.put("commits", commits);
            } else {
                walk.markStart(commit(git, walk, ref));
                List<RevFilter> filters = new ArrayList<>();
                if (q.author() != null && !q.author().isBlank()) {
                    filters.add(AuthorRevFilter.create(q.author()));
                }
                if (q.since() != null && q.until() != null) {
                    filters.add(CommitTimeRevFilter.between(
                            java.util.Date.from(q.since()), java.util.Date.from(q.until())));
                } else if (q.since() != null) {
                    filters.add(CommitTimeRevFilter.after(java.util.Date.from(q.since())));
                } else if (q.until() != null) {
                    filters.add(CommitTimeRevFilter.before(java.util.Date.from(q.until())));
                }
                if (filters.size() == 1) {
                    walk.setRevFilter(filters.get(0));
                } else if (filters.size() > 1) {
                    walk.setRevFilter(AndRevFilter.create(filters));
                }
                String path = checkPath(q.path());
                if (!path.isEmpty()) {
                    walk.setTreeFilter(
                            AndTreeFilter.create(PathFilterGroup.createFromStrings(path), TreeFilter.ANY_DIFF));
                }
                int skipped = 0;
                boolean more = false;
                for (RevCommit c : walk) {
                    if (skipped < q.offset()) {
                        skipped++;
                        continue;
                    }
                    if (commits.size() == q.limit()) {
                        more = true;
                        break;
                    }
                    commits.add(commitJson(c));
                }
                body.put("commits", commits);
                body.put("has_more", more);
            }
            body.putIfAbsent("has_more", false);
            body.put("limit", q.limit());
            body.put("offset", q.offset());
            return body;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Map<String, Object> tree(Repository git, String ref, String rawPath) {
        String path = checkPath(rawPath);
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit c = commit(git, walk, ref);
            RevTree root = c.getTree();
            ObjectId treeId = root;
            if (!path.isEmpty()) {
                try (TreeWalk tw = TreeWalk.forPath(git, path, root)) {
                    if (tw == null) {
                        throw ApiException.notFound("path " + path + " not found at " + ref);
                    }
                    if (!FileMode.TREE.equals(tw.getFileMode(0))) {
                        throw ApiException.badRequest(path + " is a file, not a directory; read it with /blob");
                    }
                    treeId = tw.getObjectId(0);
                }
            }
            List<Map<String, Object>> entries = new ArrayList<>();
            try (TreeWalk tw = new TreeWalk(git);
                    ObjectReader reader = git.newObjectReader()) {
                tw.addTree(treeId);
                tw.setRecursive(false);
                while (tw.next()) {
                    Map<String, Object> e = new LinkedHashMap<>();
                    FileMode mode = tw.getFileMode(0);
                    e.put("name", tw.getNameString());
                    e.put("path", path.isEmpty() ? tw.getPathString() : path + "/" + tw.getPathString());
                    e.put("type", type(mode));
                    e.put("mode", String.format("%06o", mode.getBits()));
                    e.put("sha", tw.getObjectId(0).name());
                    if (FileMode.REGULAR_FILE.equals(mode) || FileMode.EXECUTABLE_FILE.equals(mode)) {
                        try {
                            e.put("size", reader.getObjectSize(tw.getObjectId(0), Constants.OBJ_BLOB));
                        } catch (org.eclipse.jgit.errors.MissingObjectException partialImport) {
                            e.put("size", null);
                        }
                    }
                    entries.add(e);
                }
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("ref", ref);
            body.put("commit", c.name());
            body.put("path", path);
            body.put("entries", entries);
            return body;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static String type(FileMode mode) {
        if (FileMode.TREE.equals(mode)) {
            return "tree";
        }
        if (FileMode.GITLINK.equals(mode)) {
            return "commit";
        }
        if (FileMode.SYMLINK.equals(mode)) {
            return "symlink";
        }
        return "blob";
    }

    /** A file at a ref. */
    record Blob(String path, String sha, String mode, ObjectLoader loader) {}

    static Blob blob(Repository git, String ref, String rawPath) {
        String path = checkPath(rawPath);
        if (path.isEmpty()) {
            throw ApiException.badRequest("a file path is required");
        }
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit c = commit(git, walk, ref);
            try (TreeWalk tw = TreeWalk.forPath(git, path, c.getTree())) {
                if (tw == null) {
                    throw ApiException.notFound("path " + path + " not found at " + ref);
                }
                FileMode mode = tw.getFileMode(0);
                if (FileMode.TREE.equals(mode) || FileMode.GITLINK.equals(mode)) {
                    throw ApiException.badRequest(path + " is not a file; list it with /tree");
                }
                try {
                    return new Blob(
                            path,
                            tw.getObjectId(0).name(),
                            String.format("%06o", mode.getBits()),
                            git.open(tw.getObjectId(0)));
                } catch (org.eclipse.jgit.errors.MissingObjectException e) {
                    throw ApiException.notFound("the content of " + path
                            + " is not stored here: the repository was imported with " + "a blobless partial fetch");
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Map<String, Object> blobJson(Blob b) {
        if (b.loader().getSize() > MAX_JSON_BLOB) {
            throw ApiException.badRequest(
                    "the file is " + b.loader().getSize() + " bytes, more than JSON carries; use ?format=raw");
        }
        byte[] bytes = b.loader().getCachedBytes();
        boolean binary = RawText.isBinary(bytes) || !utf8(bytes);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("path", b.path());
        m.put("sha", b.sha());
        m.put("mode", b.mode());
        m.put("size", bytes.length);
        m.put("encoding", binary ? "base64" : "utf-8");
        m.put(
                "content",
                binary ? Base64.getEncoder().encodeToString(bytes) : new String(bytes, StandardCharsets.UTF_8));
        return m;
    }

    private static boolean utf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    /**
     * {@code base...head}: what head changed since it diverged from base (the merge base); {@code base..head}:
     * the two trees compared directly.
     */
    static Map<String, Object> diff(Repository git, String baseHead, boolean patchOnly, StringBuilder patchOut) {
        int three = baseHead.indexOf("...");
        int two = baseHead.indexOf("..");
        String base;
        String head;
        if (three > 0) {
            base = baseHead.substring(0, three);
            head = baseHead.substring(three + 3);
        } else if (two > 0) {
            base = baseHead.substring(0, two);
            head = baseHead.substring(two + 2);
        } else {
            throw ApiException.badRequest("expected base...head (or base..head), got '" + baseHead + "'");
        }
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit b = commit(git, walk, base);
            RevCommit h = commit(git, walk, head);
            RevCommit from = b;
            if (three > 0) {
                walk.reset();
                walk.setRevFilter(RevFilter.MERGE_BASE);
                walk.markStart(walk.parseCommit(b));
                walk.markStart(walk.parseCommit(h));
                from = walk.next();
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("base", b.name());
            body.put("head", h.name());
            body.put("merge_base", from == null ? null : from.name());
            body.putAll(compare(git, from == null ? null : from.getTree(), h.getTree(), patchOut));
            return body;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A commit against its first parent (or the empty tree for a root commit). */
    static Map<String, Object> commitDiff(Repository git, String commitId, StringBuilder patchOut) {
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit c = commit(git, walk, commitId);
            RevTree parent = c.getParentCount() == 0
                    ? null
                    : walk.parseCommit(c.getParent(0)).getTree();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("commit", commitJson(c));
            body.putAll(compare(git, parent, c.getTree(), patchOut));
            return body;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Object> compare(Repository git, RevTree from, RevTree to, StringBuilder patchOut)
            throws IOException {
        ByteArrayOutputStream patch = new ByteArrayOutputStream();
        List<Map<String, Object>> files = new ArrayList<>();
        int additions = 0;
        int deletions = 0;
        boolean truncated = false;
        try (DiffFormatter f = new DiffFormatter(patch);
                ObjectReader reader = git.newObjectReader()) {
            f.setRepository(git);
            f.setDiffComparator(RawTextComparator.DEFAULT);
            f.setDetectRenames(true);
            AbstractTreeIterator a = from == null ? new EmptyTreeIterator() : parser(reader, from);
            AbstractTreeIterator b = parser(reader, to);
            for (DiffEntry e : f.scan(a, b)) {
                int add = 0;
                int del = 0;
                for (Edit edit : f.toFileHeader(e).toEditList()) {
                    add += edit.getLengthB();
                    del += edit.getLengthA();
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("path", e.getChangeType() == DiffEntry.ChangeType.DELETE ? e.getOldPath() : e.getNewPath());
                m.put("old_path", e.getChangeType() == DiffEntry.ChangeType.ADD ? null : e.getOldPath());
                m.put("status", e.getChangeType().name().toLowerCase(Locale.ROOT));
                m.put("additions", add);
                m.put("deletions", del);
                files.add(m);
                additions += add;
                deletions += del;
                if (patch.size() < MAX_PATCH_BYTES) {
                    f.format(e);
                } else {
                    truncated = true;
                }
            }
            f.flush();
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("files", files);
        m.put("additions", additions);
        m.put("deletions", deletions);
        String text = patch.toString(StandardCharsets.UTF_8);
        m.put("patch", text);
        m.put("patch_truncated", truncated);
        if (patchOut != null) {
            patchOut.append(text);
        }
        return m;
    }

    private static CanonicalTreeParser parser(ObjectReader reader, RevTree tree) throws IOException {
        CanonicalTreeParser p = new CanonicalTreeParser();
        p.reset(reader, tree);
        return p;
    }

    static Map<String, Object> blame(Repository git, String ref, String rawPath) {
        String path = checkPath(rawPath);
        if (path.isEmpty()) {
            throw ApiException.badRequest("a file path is required: /blame/:ref/:path");
        }
        try (RevWalk walk = new RevWalk(git)) {
            RevCommit start = commit(git, walk, ref);
            try (TreeWalk tw = TreeWalk.forPath(git, path, start.getTree())) {
                if (tw == null) {
                    throw ApiException.notFound("path " + path + " not found at " + ref);
                }
                if (FileMode.TREE.equals(tw.getFileMode(0))) {
                    throw ApiException.badRequest(path + " is a directory");
                }
            }
            BlameResult result = new BlameCommand(git)
                    .setStartCommit(start)
                    .setFilePath(path)
                    .call();
            if (result == null) {
                throw ApiException.notFound("path " + path + " not found at " + ref);
            }
            result.computeAll();
            RawText text = result.getResultContents();
            List<Map<String, Object>> lines = new ArrayList<>();
            Map<String, Object> commits = new LinkedHashMap<>();
            for (int i = 0; i < text.size(); i++) {
                RevCommit c = result.getSourceCommit(i);
                Map<String, Object> line = new LinkedHashMap<>();
                line.put("line", i + 1);
                line.put("content", text.getString(i));
                line.put("sha", c == null ? null : c.name());
                line.put("original_line", result.getSourceLine(i) + 1);
                lines.add(line);
                if (c != null && !commits.containsKey(c.name())) {
                    Map<String, Object> cm = new LinkedHashMap<>();
                    cm.put("title", c.getShortMessage());
                    cm.put("author", person(c.getAuthorIdent()));
                    commits.put(c.name(), cm);
                }
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("ref", ref);
            body.put("commit", start.name());
            body.put("path", path);
            body.put("lines", lines);
            body.put("commits", commits);
            return body;
        } catch (GitAPIException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Map<String, Object>> branches(Repository git, String defaultBranch) {
        try {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Ref r : git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS)) {
                Map<String, Object> m = new LinkedHashMap<>();
                String name = r.getName().substring(Constants.R_HEADS.length());
                m.put("name", name);
                m.put("commit", r.getObjectId() == null ? null : r.getObjectId().name());
                m.put("is_default", name.equals(defaultBranch));
                out.add(m);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Map<String, Object> status(Repository git, dev.atrium.repos.api.Repository r, java.nio.file.Path dir) {
        try {
            Map<String, Object> m = new LinkedHashMap<>();
            Ref head = git.exactRef(Constants.R_HEADS + r.defaultBranch());
            int branches =
                    git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS).size();
            m.put("repository_id", r.id());
            m.put("default_branch", r.defaultBranch());
            m.put("empty", branches == 0);
            m.put("head", head == null ? null : head.getObjectId().name());
            m.put("branches", branches);
            m.put("tags", git.getRefDatabase().getRefsByPrefix(Constants.R_TAGS).size());
            long size;
            try (var walk = java.nio.file.Files.walk(dir)) {
                size = walk.filter(java.nio.file.Files::isRegularFile)
                        .mapToLong(p -> p.toFile().length())
                        .sum();
            }
            m.put("size_bytes", size);
            return m;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Paths and lines containing {@code q} (case-insensitive), bounded in files read, blob size and results. */
    static Map<String, Object> search(Repository git, String ref, String q, String kind, int limit) {
        String needle = q.toLowerCase(Locale.ROOT);
        List<Map<String, Object>> results = new ArrayList<>();
        boolean truncated = false;
        try (RevWalk walk = new RevWalk(git);
                TreeWalk tw = new TreeWalk(git)) {
            RevCommit c = commit(git, walk, ref);
            tw.addTree(c.getTree());
            tw.setRecursive(true);
            int files = 0;
            while (tw.next() && !truncated) {
                if (++files > MAX_SEARCH_FILES) {
                    truncated = true;
                    break;
                }
                String path = tw.getPathString();
                if (!"content".equals(kind) && path.toLowerCase(Locale.ROOT).contains(needle)) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("type", "path");
                    m.put("path", path);
                    results.add(m);
                }
                FileMode mode = tw.getFileMode(0);
                if (!"path".equals(kind)
                        && (FileMode.REGULAR_FILE.equals(mode) || FileMode.EXECUTABLE_FILE.equals(mode))) {
                    ObjectLoader loader = git.open(tw.getObjectId(0));
                    if (loader.getSize() <= MAX_SEARCH_BLOB) {
                        byte[] bytes = loader.getCachedBytes();
                        if (!RawText.isBinary(bytes)) {
                            String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
                            for (int i = 0; i < lines.length && results.size() <= limit; i++) {
                                if (lines[i].toLowerCase(Locale.ROOT).contains(needle)) {
                                    Map<String, Object> m = new LinkedHashMap<>();
                                    m.put("type", "content");
                                    m.put("path", path);
                                    m.put("line", i + 1);
                                    m.put("preview", lines[i].length() > 300 ? lines[i].substring(0, 300) : lines[i]);
                                    results.add(m);
                                }
                            }
                        }
                    }
                }
                if (results.size() > limit) {
                    truncated = true;
                }
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("query", q);
            body.put("ref", ref);
            body.put("commit", c.name());
            body.put("results", results.size() > limit ? results.subList(0, limit) : results);
            body.put("truncated", truncated);
            return body;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
