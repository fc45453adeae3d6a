package dev.atrium.actions.internal;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code actions/cache}: archives of workspace paths per repository and key, restored by exact key or by the newest
 * key starting with a restore key, and saved at the end of a job that succeeded when the exact key missed. A key is
 * written once (GitHub's rule: caches are immutable).
 */
@Component(service = Caches.class)
public class Caches {

    private final BlobStore blobs;
    private final Sql sql;
    private final ActionsSettings settings;

    @Activate
    public Caches(@Reference BlobStore blobs, @Reference ActionStore store, @Reference ActionsSettings settings) {
        this.blobs = blobs;
        this.sql = store.sql();
        this.settings = settings;
    }

    record Hit(String key, boolean exact) {}

    /** The scope a run saves its caches in: its ref, or one of its own for a run from a fork. */
    static String scope(ActionStore.Run run) {
        return (run.fromFork() ? "fork:" + run.id() + ":" : "") + (run.ref() == null ? "" : run.ref());
    }

    /**
     * Restores the cache of {@code key}, else the newest whose key starts with a restore key, from the scopes in
     * order (the run's own, then its default branch's).
     */
    Hit restore(String repoId, List<String> scopes, String key, List<String> restoreKeys, WorkspaceFiles files)
            throws IOException {
        Map.Entry<String, String> found = null;
        String foundScope = null;
        boolean exact = false;
        for (String scope : scopes) {
            found = sql.one(
                            "SELECT key, blob_key FROM action_caches WHERE repo_id = ? AND scope = ? AND key = ?",
                            rs -> Map.entry(rs.getString(1), rs.getString(2)),
                            repoId,
                            scope,
                            key)
                    .orElse(null);
            if (found != null) {
                exact = true;
                foundScope = scope;
                break;
            }
        }
        for (int s = 0; found == null && s < scopes.size(); s++) {
            for (int i = 0; found == null && i < restoreKeys.size(); i++) {
                found = sql.one(
                                "SELECT key, blob_key FROM action_caches WHERE repo_id = ? AND scope = ?"
                                        + " AND starts_with(key, ?) ORDER BY created_at DESC LIMIT 1",
                                rs -> Map.entry(rs.getString(1), rs.getString(2)),
                                repoId,
                                scopes.get(s),
                                restoreKeys.get(i))
                        .orElse(null);
                foundScope = scopes.get(s);
            }
        }
        if (found == null) {
            return null;
        }
        try (InputStream in = blobs.open(found.getValue())) {
            files.unzip(in, files.inside(""));
        }
        sql.update(
                "UPDATE action_caches SET last_used_at = now() WHERE repo_id = ? AND scope = ? AND key = ?",
                repoId,
                foundScope,
                found.getKey());
        return new Hit(found.getKey(), exact);
    }

    void save(String repoId, String scope, String key, List<String> paths, WorkspaceFiles files, JobLog log) {
        try {
            Map<String, Path> found = files.collect(paths);
            Path root = files.inside("");
            TreeMap<String, Path> byWorkspacePath = new TreeMap<>();
            found.values().forEach(p -> byWorkspacePath.put(root.relativize(p).toString(), p));
            if (byWorkspacePath.isEmpty()) {
                log.note("##[warning]Cache not saved: no files matched " + String.join(", ", paths));
                return;
            }
            Path zip = Files.createTempFile(settings.workDirectory, "cache", ".zip");
            try {
                try (OutputStream out = Files.newOutputStream(zip)) {
                    WorkspaceFiles.zip(byWorkspacePath, out);
                }
                Blob blob;
                try (InputStream in = Files.newInputStream(zip)) {
                    blob = blobs.put(Artifacts.namespace(repoId), in, settings.maxArtifactBytes);
                }
                int n = sql.update(
                        "INSERT INTO action_caches (repo_id, scope, key, blob_key, size) VALUES (?, ?, ?, ?, ?)"
                                + " ON CONFLICT DO NOTHING",
                        repoId,
                        scope,
                        key,
                        blob.key(),
                        blob.size());
                log.note(n > 0 ? "Cache saved with key: " + key : "Cache with key " + key + " was saved meanwhile");
            } finally {
                Files.deleteIfExists(zip);
            }
        } catch (IOException | RuntimeException e) {
            log.note("##[warning]Cache not saved: " + e.getMessage());
        }
    }
}
