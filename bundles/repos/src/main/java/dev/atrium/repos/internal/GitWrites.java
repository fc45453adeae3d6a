package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.jgit.dircache.DirCache;
import org.eclipse.jgit.dircache.DirCacheBuilder;
import org.eclipse.jgit.dircache.DirCacheEntry;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;

/** Commits made from JSON and branch changes, each one compare-and-swap ref update. */
final class GitWrites {

    private GitWrites() {}

    /** One file change of a commit: new content (null for a deletion). */
    record FileChange(String path, byte[] content, boolean executable) {
        boolean deletion() {
            return content == null;
        }
    }

    /** What a commit request asks for. {@code expectedParent} null: on top of whatever the branch holds now. */
    record CommitRequest(
            String branch,
            String expectedParent,
            String message,
            PersonIdent author,
            List<FileChange> changes,
            boolean replaceTree) {}

    /**
     * Writes a commit on a branch. With an expected parent the branch must still point at it (40 zeros: the
     * branch must not exist yet); otherwise 409 {@code CONFLICT} and nothing changes.
     */
    static RefChange commit(Repository git, CommitRequest req) {
        String refName = Constants.R_HEADS + req.branch();
        try (RevWalk walk = new RevWalk(git);
                ObjectInserter inserter = new CheckedInserter(git.newObjectInserter())) {
            Ref current = git.exactRef(refName);
            ObjectId currentId = current == null ? ObjectId.zeroId() : current.getObjectId();
            if (req.expectedParent() != null) {
                ObjectId expected = parseId(req.expectedParent(), "parent");
                if (!expected.equals(currentId)) {
                    throw ApiException.conflict("stale parent: branch " + req.branch() + " is at "
                            + (current == null ? "nothing (it does not exist)" : currentId.name()) + ", not "
                            + expected.name());
                }
            }
            RevCommit parent = current == null ? null : walk.parseCommit(currentId);
            Map<String, FileMode> modes = new TreeMap<>();
            Map<String, ObjectId> ids = new TreeMap<>();
            if (parent != null && !req.replaceTree()) {
                try (TreeWalk tw = new TreeWalk(git)) {
                    tw.addTree(parent.getTree());
                    tw.setRecursive(true);
                    while (tw.next()) {
                        modes.put(tw.getPathString(), tw.getFileMode(0));
                        ids.put(tw.getPathString(), tw.getObjectId(0));
                    }
                }
            }
            for (FileChange ch : req.changes()) {
                if (ch.deletion()) {
                    if (ids.remove(ch.path()) == null) {
                        throw ApiException.badRequest(
                                "cannot delete " + ch.path() + ": no such file on " + req.branch());
                    }
                    modes.remove(ch.path());
                } else {
                    ids.put(ch.path(), inserter.insert(Constants.OBJ_BLOB, ch.content()));
                    modes.put(ch.path(), ch.executable() ? FileMode.EXECUTABLE_FILE : FileMode.REGULAR_FILE);
                }
            }
            DirCache index = DirCache.newInCore();
            DirCacheBuilder builder = index.builder();
            String previous = null;
            for (Map.Entry<String, ObjectId> e : ids.entrySet()) {
                if (previous != null && e.getKey().startsWith(previous + "/")) {
                    throw ApiException.badRequest(previous + " is a file, so " + e.getKey() + " cannot be inside it");
                }
                DirCacheEntry entry = new DirCacheEntry(e.getKey());
                entry.setFileMode(modes.get(e.getKey()));
                entry.setObjectId(e.getValue());
                builder.add(entry);
                previous = e.getKey();
            }
            builder.finish();
            ObjectId tree = index.writeTree(inserter);
            if (parent != null && tree.equals(parent.getTree())) {
                throw ApiException.badRequest("the changes leave the tree as it is: nothing to commit");
            }
            CommitBuilder cb = new CommitBuilder();
            cb.setTreeId(tree);
            if (parent != null) {
                cb.setParentId(parent);
            }
            cb.setAuthor(req.author());
            cb.setCommitter(req.author());
            cb.setMessage(req.message().endsWith("\n") ? req.message() : req.message() + "\n");
            ObjectId commit = inserter.insert(cb);
            inserter.flush();
            update(git, refName, currentId, commit, "commit: " + firstLine(req.message()), false);
            return new RefChange(refName, currentId.name(), commit.name());
        } catch (org.eclipse.jgit.errors.CorruptObjectException e) {
            throw ApiException.badRequest("the commit would not pass git fsck: " + e.getMessage());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static RefChange createBranch(Repository git, String branch, String from) {
        String refName = Constants.R_HEADS + branch;
        try (RevWalk walk = new RevWalk(git)) {
            if (git.exactRef(refName) != null) {
                throw ApiException.conflict("branch " + branch + " already exists");
            }
            RevCommit start = GitReads.commit(git, walk, from);
            update(git, refName, ObjectId.zeroId(), start, "branch: created from " + from, false);
            return new RefChange(refName, ObjectId.zeroId().name(), start.name());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static RefChange deleteBranch(Repository git, String branch) {
        String refName = Constants.R_HEADS + GitNames.checkBranch(branch);
        try {
            Ref ref = git.exactRef(refName);
            if (ref == null) {
                throw ApiException.notFound("branch " + branch + " not found");
            }
            RefUpdate u = git.updateRef(refName);
            u.setExpectedOldObjectId(ref.getObjectId());
            u.setForceUpdate(true);
            RefUpdate.Result r = u.delete();
            if (r != RefUpdate.Result.FORCED && r != RefUpdate.Result.NO_CHANGE) {
                throw ApiException.conflict("branch " + branch + " changed while deleting it (" + r + ")");
            }
            return new RefChange(
                    refName, ref.getObjectId().name(), ObjectId.zeroId().name());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void update(
            Repository git, String refName, ObjectId expected, ObjectId next, String log, boolean force)
            throws IOException {
        RefUpdate u = git.updateRef(refName);
        u.setExpectedOldObjectId(expected);
        u.setNewObjectId(next);
        u.setForceUpdate(force);
        u.setRefLogMessage(log, false);
        RefUpdate.Result r = u.update();
        switch (r) {
            case NEW, FAST_FORWARD, FORCED, NO_CHANGE -> {}
            case LOCK_FAILURE, REJECTED, REJECTED_CURRENT_BRANCH ->
                throw ApiException.conflict(
                        "stale parent: " + refName + " moved while committing; read it again and retry");
            default -> throw new IllegalStateException("ref update of " + refName + " failed: " + r);
        }
    }

    static ObjectId parseId(String hex, String field) {
        if (hex == null || !ObjectId.isId(hex.toLowerCase(Locale.ROOT))) {
            throw ApiException.badRequest(field + " must be a full 40-character commit id");
        }
        return ObjectId.fromString(hex.toLowerCase(Locale.ROOT));
    }

    /** A name or email that git fsck accepts in an author line: no '<', '>', line breaks, NUL or lone surrogates. */
    private static String identityPart(String field, String value) {
        String problem = GitNames.textProblem(value);
        if (problem != null) {
            throw ApiException.badRequest(field + ": " + problem);
        }
        if (value.indexOf('<') >= 0
                || value.indexOf('>') >= 0
                || value.indexOf('\n') >= 0
                || value.indexOf('\r') >= 0) {
            throw ApiException.badRequest(field + " must not contain '<', '>' or line breaks");
        }
        return value;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** Parses the JSON list of changes: {@code [{path, content, encoding, action, executable}]}. */
    static List<FileChange> changes(com.fasterxml.jackson.databind.JsonNode node) {
        if (node == null || !node.isArray() || node.isEmpty()) {
            throw ApiException.badRequest("changes must be a non-empty array of {path, content, encoding, action}");
        }
        if (node.size() > 10_000) {
            throw ApiException.badRequest("at most 10000 changes per commit");
        }
        List<FileChange> out = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (com.fasterxml.jackson.databind.JsonNode ch : node) {
            dev.atrium.kernel.api.JsonBody b = dev.atrium.kernel.api.JsonBody.of(ch);
            String path = GitNames.checkStoredPath(b.requiredString("path"));
            if (!seen.add(path)) {
                throw ApiException.badRequest(path + " appears twice in changes");
            }
            String action =
                    b.oneOf("action", java.util.Set.of("upsert", "delete")).orElse("upsert");
            if (action.equals("delete")) {
                out.add(new FileChange(path, null, false));
                continue;
            }
            String encoding =
                    b.oneOf("encoding", java.util.Set.of("utf-8", "base64")).orElse("utf-8");
            String content = b.requiredString("content");
            byte[] bytes;
            if (encoding.equals("base64")) {
                try {
                    bytes = java.util.Base64.getDecoder().decode(content);
                } catch (IllegalArgumentException e) {
                    throw ApiException.badRequest("content of " + path + " is not valid base64");
                }
            } else {
                bytes = content.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            }
            out.add(new FileChange(path, bytes, b.bool("executable").orElse(false)));
        }
        return out;
    }

    /**
     * Reads a commit body: {@code branch} (default: {@code defaultBranch}), {@code parent} (optional expected
     * head; 40 zeros for a branch that must not exist yet), {@code message}, optional {@code author {name, email}},
     * {@code changes}.
     */
    static CommitRequest request(
            com.fasterxml.jackson.databind.JsonNode body, String defaultBranch, dev.atrium.kernel.api.Caller caller) {
        dev.atrium.kernel.api.JsonBody b = dev.atrium.kernel.api.JsonBody.of(body);
        String branch = GitNames.checkBranch(b.optionalText("branch", 1, 200).orElse(defaultBranch));
        String parent = b.string("parent").orElse(null);
        if (parent != null) {
            parseId(parent, "parent");
        }
        String message = b.text("message", 1, 65_536);
        String name = caller.principalId();
        String email = caller.principalId() + "@users.noreply.atrium";
        com.fasterxml.jackson.databind.JsonNode author = body.get("author");
        if (author != null && !author.isNull()) {
            dev.atrium.kernel.api.JsonBody a = dev.atrium.kernel.api.JsonBody.of(author);
            name = identityPart("author.name", a.text("name", 1, 200));
            email = identityPart("author.email", a.text("email", 3, 320));
        }
        String messageProblem = GitNames.textProblem(message);
        if (messageProblem != null) {
            throw ApiException.badRequest("message: " + messageProblem);
        }
        return new CommitRequest(
                branch, parent, message, new PersonIdent(name, email), changes(body.get("changes")), false);
    }
}
