package dev.atrium.repos.pulls.internal;

import dev.atrium.repos.api.Repository;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jgit.diff.DiffEntry;
import org.eclipse.jgit.diff.DiffFormatter;
import org.eclipse.jgit.diff.Edit;
import org.eclipse.jgit.diff.RawTextComparator;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.CanonicalTreeParser;

/**
 * A pull request's diff: what the head did since it left the base (the merge base), per file with its counts and
 * patch, or as one unified diff written as it is made.
 */
final class PullDiffs {

    /** Renames are looked for among at most this many added and deleted files (JGit's default is 400). */
    static final int RENAME_LIMIT = 1000;

    private final PullGit git;

    PullDiffs(PullGit git) {
        this.git = git;
    }

    private org.eclipse.jgit.lib.Repository git(Repository r) {
        return git.open(r);
    }

    /** The changes of a diff: per file, with stats; each file's patch while the whole stays under {@code maxPatch}. */
    Map<String, Object> diff(Repository base, String baseCommit, String headCommit, int maxPatch) {
        try (org.eclipse.jgit.lib.Repository git = git(base);
                RevWalk walk = new RevWalk(git);
                ObjectReader reader = git.newObjectReader()) {
            RevCommit from = PullGit.mergeBase(walk, baseCommit, headCommit);
            RevCommit to = walk.parseCommit(ObjectId.fromString(headCommit));
            List<Map<String, Object>> files = new ArrayList<>();
            int additions = 0;
            int deletions = 0;
            long patchBytes = 0;
            boolean truncated = false;
            ByteArrayOutputStream one = new ByteArrayOutputStream();
            try (DiffFormatter f = formatter(git, one)) {
                for (DiffEntry e : f.scan(tree(reader, from), tree(reader, to))) {
                    int add = 0;
                    int del = 0;
                    String patch = null;
                    if (!truncated) {
                        // one formatting per file: its counts are read from the patch it makes
                        one.reset();
                        f.format(e);
                        f.flush();
                        int[] counts = counts(one.toByteArray());
                        add = counts[0];
                        del = counts[1];
                        if (patchBytes + one.size() <= maxPatch) {
                            patch = one.toString(StandardCharsets.UTF_8);
                            patchBytes += one.size();
                        } else {
                            truncated = true;
                        }
                    } else {
                        for (Edit edit : f.toFileHeader(e).toEditList()) {
                            add += edit.getLengthB();
                            del += edit.getLengthA();
                        }
                    }
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("path", e.getChangeType() == DiffEntry.ChangeType.DELETE ? e.getOldPath() : e.getNewPath());
                    m.put("old_path", e.getChangeType() == DiffEntry.ChangeType.ADD ? null : e.getOldPath());
                    m.put("status", e.getChangeType().name().toLowerCase(Locale.ROOT));
                    m.put("additions", add);
                    m.put("deletions", del);
                    m.put("patch", patch);
                    files.add(m);
                    additions += add;
                    deletions += del;
                }
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("base", baseCommit);
            out.put("head", headCommit);
            out.put("merge_base", from == null ? null : from.name());
            out.put("files", files);
            out.put("additions", additions);
            out.put("deletions", deletions);
            out.put("patch_truncated", truncated);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Added and removed lines of one file's unified diff: the lines of its hunks that start with {@code +} or
     * {@code -} (the {@code ---}/{@code +++} header comes before the first {@code @@}).
     */
    static int[] counts(byte[] patch) {
        int add = 0;
        int del = 0;
        boolean inHunk = false;
        for (int i = 0; i < patch.length; ) {
            int end = i;
            while (end < patch.length && patch[end] != '\n') {
                end++;
            }
            if (end > i) {
                byte first = patch[i];
                if (first == '@' && end - i > 1 && patch[i + 1] == '@') {
                    inHunk = true;
                } else if (inHunk && first == '+') {
                    add++;
                } else if (inHunk && first == '-') {
                    del++;
                }
            }
            i = end + 1;
        }
        return new int[] {add, del};
    }

    /** The unified diff, written as it is made: a large diff never sits whole in memory. */
    void patch(Repository base, String baseCommit, String headCommit, OutputStream out) throws IOException {
        try (org.eclipse.jgit.lib.Repository git = git(base);
                RevWalk walk = new RevWalk(git);
                ObjectReader reader = git.newObjectReader();
                DiffFormatter f = formatter(git, out)) {
            RevCommit from = PullGit.mergeBase(walk, baseCommit, headCommit);
            RevCommit to = walk.parseCommit(ObjectId.fromString(headCommit));
            f.format(f.scan(tree(reader, from), tree(reader, to)));
            f.flush();
        }
    }

    private static DiffFormatter formatter(org.eclipse.jgit.lib.Repository git, OutputStream out) {
        DiffFormatter f = new DiffFormatter(out);
        f.setRepository(git);
        f.setDiffComparator(RawTextComparator.DEFAULT);
        f.setDetectRenames(true);
        f.getRenameDetector().setRenameLimit(RENAME_LIMIT);
        return f;
    }

    private static org.eclipse.jgit.treewalk.AbstractTreeIterator tree(ObjectReader reader, RevCommit c)
            throws IOException {
        if (c == null) {
            return new org.eclipse.jgit.treewalk.EmptyTreeIterator();
        }
        CanonicalTreeParser p = new CanonicalTreeParser();
        p.reset(reader, c.getTree());
        return p;
    }
}
