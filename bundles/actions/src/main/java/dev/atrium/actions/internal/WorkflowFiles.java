package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.WorkflowFile;
import dev.atrium.actions.internal.workflow.Workflow;
import dev.atrium.actions.internal.workflow.WorkflowException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.jgit.dircache.DirCache;
import org.eclipse.jgit.dircache.DirCacheBuilder;
import org.eclipse.jgit.dircache.DirCacheEditor;
import org.eclipse.jgit.dircache.DirCacheEntry;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.treewalk.TreeWalk;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Workflow files: read from a repository's commits (the workflows of a push are those of the pushed commit), kept
 * per repository as its default branch has them (what a dispatch, a schedule and the workflow routes use), and
 * written as commits to the default branch.
 */
@Component(service = WorkflowFiles.class)
public class WorkflowFiles {

    /** Where workflows are looked for: GitHub's, Gitea's, and Atrium's own directory. */
    static final List<String> DIRECTORIES = Workflow.DIRECTORIES;

    static final int MAX_BYTES = 512 * 1024;

    private final RepositoryRegistry repositories;
    private final Sql sql;
    private final RunnerLink runners;
    private final PrincipalDirectory principals;

    @Activate
    public WorkflowFiles(
            @Reference RepositoryRegistry repositories,
            @Reference ActionStore store,
            @Reference RunnerLink runners,
            @Reference PrincipalDirectory principals) {
        this.repositories = repositories;
        this.sql = store.sql();
        this.runners = runners;
        this.principals = principals;
    }

    static boolean isWorkflowPath(String path) {
        return Workflow.isWorkflowFile(path);
    }

    /** A workflow path as a route names it: a whole path, or a file name in {@code .github/workflows/}. */
    static String normalize(String path) {
        if (path == null || path.isBlank() || path.contains("..") || path.contains("\\") || path.contains("//")) {
            throw ApiException.badRequest("a workflow path is a .yml or .yaml file in .github/workflows/");
        }
        String p = path.startsWith("/") ? path.substring(1) : path;
        if (!p.contains("/")) {
            p = DIRECTORIES.get(0) + p;
        }
        if (!isWorkflowPath(p)) {
            throw ApiException.badRequest(
                    "a workflow is a .yml or .yaml file directly in " + String.join(", ", DIRECTORIES) + ": " + path);
        }
        return p;
    }

    Workflow parse(String path, String content) throws WorkflowException {
        return Workflow.parse(path, content, runners.labels());
    }

    /** Checks everything but {@code runs-on}'s labels. */
    Workflow parseAnyLabel(String path, String content) throws WorkflowException {
        return Workflow.parse(path, content, java.util.Set.of(Workflow.ANY_LABEL));
    }

    /** The workflow files of {@code commitId} that differ from {@code baseId}'s (all of them when it is null). */
    Map<String, String> changed(org.eclipse.jgit.lib.Repository db, String baseId, String commitId) {
        Map<String, String> now = at(db, commitId);
        if (baseId == null || now.isEmpty()) {
            return now;
        }
        Map<String, String> before = at(db, baseId);
        Map<String, String> out = new LinkedHashMap<>();
        now.forEach((path, text) -> {
            if (!text.equals(before.get(path))) {
                out.put(path, text);
            }
        });
        return out;
    }

    /** The commit a branch of an open repository is at, or null. */
    String headOf(org.eclipse.jgit.lib.Repository db, String branch) {
        try {
            Ref ref = db.exactRef(Constants.R_HEADS + branch);
            return ref == null ? null : ref.getObjectId().name();
        } catch (IOException e) {
            return null;
        }
    }

    /** The workflow files of a commit, path to text. */
    Map<String, String> at(Repository repo, String commitId) {
        try (org.eclipse.jgit.lib.Repository db = open(repo)) {
            return at(db, commitId);
        } catch (IOException e) {
            throw new IllegalStateException("reading the workflows of " + repo.id() + " at " + commitId + " failed", e);
        }
    }

    /** The workflow files of a commit of an open repository. */
    Map<String, String> at(org.eclipse.jgit.lib.Repository db, String commitId) {
        Map<String, String> out = new LinkedHashMap<>();
        try (RevWalk walk = new RevWalk(db)) {
            RevCommit commit = walk.parseCommit(ObjectId.fromString(commitId));
            for (String dir : DIRECTORIES) {
                try (TreeWalk tw = TreeWalk.forPath(db, dir.substring(0, dir.length() - 1), commit.getTree())) {
                    if (tw == null || !tw.isSubtree()) {
                        continue;
                    }
                    try (TreeWalk files = new TreeWalk(db)) {
                        files.addTree(tw.getObjectId(0));
                        while (files.next()) {
                            String path = dir + files.getPathString();
                            if (isWorkflowPath(path) && files.getFileMode(0).getObjectType() == Constants.OBJ_BLOB) {
                                byte[] bytes = db.open(files.getObjectId(0)).getCachedBytes(MAX_BYTES);
                                out.put(path, new String(bytes, StandardCharsets.UTF_8));
                            }
                        }
                    }
                }
            }
        } catch (org.eclipse.jgit.errors.LargeObjectException e) {
            // a workflow over the limit is not read; the push check names it
        } catch (IOException e) {
            throw new IllegalStateException("reading the workflows at " + commitId + " failed", e);
        }
        return out;
    }

    /** Reads the default branch's workflows into the repository's list; the paths read. */
    List<String> sync(Repository repo, String onlyPath) {
        String head = headOf(repo);
        Map<String, String> files = head == null ? Map.of() : at(repo, head);
        Set<String> seen = new HashSet<>();
        for (Map.Entry<String, String> f : files.entrySet()) {
            if (onlyPath != null && !onlyPath.equals(f.getKey())) {
                continue;
            }
            seen.add(f.getKey());
            record(repo.id(), f.getKey(), f.getValue(), head);
        }
        if (onlyPath == null) {
            for (WorkflowFile w :
                    sql.list("SELECT * FROM action_workflows WHERE repo_id = ?", WorkflowFile::of, repo.id())) {
                if (!seen.contains(w.path())) {
                    sql.update("DELETE FROM action_workflows WHERE repo_id = ? AND path = ?", repo.id(), w.path());
                }
            }
        } else if (seen.isEmpty()) {
            sql.update("DELETE FROM action_workflows WHERE repo_id = ? AND path = ?", repo.id(), onlyPath);
        }
        return List.copyOf(seen);
    }

    private void record(String repoId, String path, String content, String commitId) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        String error = null;
        Integer line = null;
        try {
            Workflow w = parse(path, content);
            if (w.name() != null && !w.name().isBlank()) {
                name = w.name();
            }
        } catch (WorkflowException e) {
            error = e.getMessage();
            line = e.line() > 0 ? e.line() : null;
        }
        sql.update(
                "INSERT INTO action_workflows (repo_id, path, name, content, commit_id, error, error_line)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo_id, path) DO UPDATE SET name = excluded.name,"
                        + " content = excluded.content, commit_id = excluded.commit_id, error = excluded.error,"
                        + " error_line = excluded.error_line, updated_at = now()",
                repoId,
                path,
                name,
                content,
                commitId,
                error,
                line);
    }

    /**
     * Commits {@code content} (or the file's removal, when null) to the default branch, checked first. The push is
     * announced like any other, so its workflows run as a push's would.
     */
    String commit(Caller caller, Repository repo, String path, String content, String message) {
        if (content != null) {
            if (content.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
                throw new ApiException(413, "PAYLOAD_TOO_LARGE", "a workflow file is at most " + MAX_BYTES + " bytes");
            }
            try {
                parse(path, content);
            } catch (WorkflowException e) {
                throw new ApiException(422, "INVALID_WORKFLOW", e.getMessage());
            }
        }
        if (repositories.mergesOnly(repo)) {
            throw ApiException.conflict("the default branch takes merges of pull requests only");
        }
        String branch = repo.defaultBranch();
        RefChange change;
        try (RepositoryRegistry.PushLock lock = repositories.lockForPush(repo, java.time.Duration.ofSeconds(30));
                org.eclipse.jgit.lib.Repository db = open(repo);
                ObjectInserter ins = db.newObjectInserter();
                ObjectReader reader = db.newObjectReader();
                RevWalk walk = new RevWalk(reader)) {
            Ref ref = db.exactRef(Constants.R_HEADS + branch);
            DirCache index = DirCache.newInCore();
            RevCommit parent = null;
            if (ref != null) {
                parent = walk.parseCommit(ref.getObjectId());
                DirCacheBuilder b = index.builder();
                b.addTree(new byte[0], 0, reader, parent.getTree());
                b.finish();
            }
            DirCacheEditor editor = index.editor();
            if (content == null) {
                if (index.getEntry(path) == null) {
                    throw ApiException.notFound("workflow not found");
                }
                editor.add(new DirCacheEditor.DeletePath(path));
            } else {
                ObjectId blob = ins.insert(Constants.OBJ_BLOB, content.getBytes(StandardCharsets.UTF_8));
                editor.add(new DirCacheEditor.PathEdit(path) {
                    @Override
                    public void apply(DirCacheEntry ent) {
                        ent.setFileMode(FileMode.REGULAR_FILE);
                        ent.setObjectId(blob);
                    }
                });
            }
            editor.finish();
            ObjectId tree = index.writeTree(ins);
            if (parent != null && parent.getTree().getId().equals(tree)) {
                return parent.name(); // nothing changed
            }
            CommitBuilder cb = new CommitBuilder();
            PersonIdent who = ident(caller.principalId());
            cb.setAuthor(who);
            cb.setCommitter(who);
            cb.setTreeId(tree);
            if (parent != null) {
                cb.setParentId(parent);
            }
            cb.setMessage(message);
            ObjectId commit = ins.insert(cb);
            ins.flush();
            RefUpdate ru = db.updateRef(Constants.R_HEADS + branch);
            ru.setExpectedOldObjectId(parent == null ? ObjectId.zeroId() : parent);
            ru.setNewObjectId(commit);
            ru.setRefLogMessage("workflow: " + message, false);
            RefUpdate.Result r = ru.update(walk);
            if (r != RefUpdate.Result.NEW && r != RefUpdate.Result.FAST_FORWARD) {
                throw ApiException.conflict("the default branch moved meanwhile; try again");
            }
            change = new RefChange(
                    Constants.R_HEADS + branch,
                    parent == null ? ObjectId.zeroId().name() : parent.name(),
                    commit.name());
        } catch (IOException e) {
            throw new IllegalStateException("committing a workflow to " + repo.id() + " failed", e);
        }
        repositories.pushed(repo, caller.principalId(), List.of(change));
        sync(repo, path);
        return change.newId();
    }

    String headOf(Repository repo) {
        try (org.eclipse.jgit.lib.Repository db = open(repo)) {
            Ref ref = db.exactRef(Constants.R_HEADS + repo.defaultBranch());
            return ref == null ? null : ref.getObjectId().name();
        } catch (IOException e) {
            throw new IllegalStateException("reading " + repo.id() + "'s default branch failed", e);
        }
    }

    org.eclipse.jgit.lib.Repository open(Repository repo) throws IOException {
        return new FileRepositoryBuilder()
                .setGitDir(repositories.directory(repo).toFile())
                .setMustExist(true)
                .build();
    }

    private PersonIdent ident(String principalId) {
        String name = principals
                .get(principalId)
                .map(PrincipalDirectory.Entry::username)
                .filter(n -> n != null && !n.isBlank())
                .orElse(principalId);
        return new PersonIdent(name, principalId + "@users.noreply.atrium");
    }
}
