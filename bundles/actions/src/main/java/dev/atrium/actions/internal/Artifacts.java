package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Artifact;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Artifacts of runs: ZIP archives in the BlobStore, one namespace per repository ({@code actions.<repo id>}), kept
 * for their retention (the upload's {@code retention-days}, at most the server's) and deleted after it. The archive a
 * download answers is the one the upload made, byte for byte.
 */
@Component(service = Artifacts.class)
public class Artifacts {

    private static final Logger LOG = LoggerFactory.getLogger(Artifacts.class);
    static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[^\"<>|*?\\\\/:\\r\\n\\x00]{1,255}");

    private final BlobStore blobs;
    private final ActionStore store;
    private final Sql sql;
    private final ActionsSettings settings;

    @Activate
    public Artifacts(@Reference BlobStore blobs, @Reference ActionStore store, @Reference ActionsSettings settings) {
        this.blobs = blobs;
        this.store = store;
        this.sql = store.sql();
        this.settings = settings;
    }

    static String namespace(String repoId) {
        return "actions." + repoId;
    }

    BlobStore blobs() {
        return blobs;
    }

    Artifact upload(Run run, String jobId, String name, Map<String, Path> files, int days, boolean overwrite)
            throws IOException {
        if (!NAME.matcher(name).matches()) {
            throw new IOException("an artifact's name must not contain \" < > | * ? \\ / : or line breaks: " + name);
        }
        Path zip = Files.createTempFile(settings.workDirectory, "artifact", ".zip");
        try {
            try (OutputStream out = Files.newOutputStream(zip)) {
                WorkspaceFiles.zip(files, out);
            }
            Blob blob;
            try (InputStream in = Files.newInputStream(zip)) {
                blob = blobs.put(namespace(run.repoId()), in, settings.maxArtifactBytes);
            } catch (dev.atrium.blob.api.BlobTooLargeException e) {
                throw new IOException("the artifact is larger than " + settings.maxArtifactBytes + " bytes", e);
            }
            int keep = days > 0 ? Math.min(days, settings.artifactRetentionDays) : settings.artifactRetentionDays;
            Instant expires = Instant.now().plus(Duration.ofDays(keep));
            String id = Ids.id("art");
            String replaced = sql.tx(c -> {
                String old = Sql.one(
                                c,
                                "DELETE FROM action_artifacts WHERE run_id = ? AND name = ? AND (? OR job_id = ?) RETURNING blob_key",
                                rs -> rs.getString(1),
                                run.id(),
                                name,
                                overwrite,
                                jobId)
                        .orElse(null);
                Sql.update(
                        c,
                        "INSERT INTO action_artifacts (id, repo_id, run_id, job_id, name, size, files, blob_key, expires_at)"
                                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        id,
                        run.repoId(),
                        run.id(),
                        jobId,
                        name,
                        blob.size(),
                        files.size(),
                        blob.key(),
                        java.sql.Timestamp.from(expires));
                return old;
            });
            if (replaced != null) {
                release(replaced);
            }
            return store.artifact(run.repoId(), id).orElseThrow();
        } catch (Sql.Conflict e) {
            throw new IOException("an artifact named " + name + " exists in this run already: name it otherwise, or"
                    + " set overwrite: true");
        } finally {
            Files.deleteIfExists(zip);
        }
    }

    /** Extracts one artifact (or, without a name, each matching one into a directory of its name). */
    int download(Run run, String name, String pattern, Path into, WorkspaceFiles files, boolean merge)
            throws IOException {
        List<Artifact> chosen;
        if (name != null && !name.isBlank()) {
            chosen = List.of(store.artifactByName(run.id(), name)
                    .orElseThrow(() -> new IOException("no artifact named " + name + " in this run")));
        } else {
            PathMatcher m = pattern == null || pattern.isBlank()
                    ? null
                    : FileSystems.getDefault().getPathMatcher("glob:" + pattern);
            chosen = store.artifacts(run.id()).stream()
                    .filter(a -> m == null || m.matches(Path.of(a.name())))
                    .toList();
        }
        int n = 0;
        for (Artifact a : chosen) {
            Path target = (name != null && !name.isBlank()) || merge ? into : into.resolve(a.name());
            try (InputStream in = blobs.open(a.blobKey())) {
                n += files.unzip(in, target);
            }
        }
        return n;
    }

    void delete(Artifact a) {
        if (sql.update("DELETE FROM action_artifacts WHERE id = ?", a.id()) > 0) {
            release(a.blobKey());
        }
    }

    /** Deletes the bytes once no artifact names them (identical archives share one blob). */
    private void release(String blobKey) {
        try {
            boolean used = sql.count(
                            "SELECT (SELECT count(*) FROM action_artifacts WHERE blob_key = ?)"
                                    + " + (SELECT count(*) FROM action_caches WHERE blob_key = ?)",
                            blobKey,
                            blobKey)
                    > 0;
            if (!used) {
                blobs.delete(blobKey);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("an artifact's bytes ({}) were not deleted: {}", blobKey, e.toString());
        }
    }

    /** Deletes artifacts past their retention; returns how many. */
    int expire() {
        int n = 0;
        for (Artifact a : store.expiredArtifacts(500)) {
            delete(a);
            n++;
        }
        return n;
    }

    void checkDownloadable(Artifact a) {
        if (a.expiresAt().isBefore(Instant.now())) {
            throw new ApiException(410, "GONE", "the artifact expired");
        }
    }
}
