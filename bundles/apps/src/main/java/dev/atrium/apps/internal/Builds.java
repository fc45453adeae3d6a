package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.actions.api.WorkflowArtifacts;
import dev.atrium.actions.api.WorkflowArtifacts.Artifact;
import dev.atrium.apps.internal.GroupReconciler.Built;
import dev.atrium.apps.internal.manifest.Manifest;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import java.io.IOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The artifacts an app's workers and containers run: the newest one a successful run of the named workflow made at
 * the deployed commit, else a run started for it and awaited (bounded). Each artifact's origin goes into the app
 * deployment's snapshot, so that a rollback deploys the same bytes again.
 */
@Component(service = Builds.class)
public class Builds {

    private final AppsSettings settings;

    /** Actions, when its feature runs: an app without workers or containers deploys without it. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile WorkflowArtifacts actions;

    @Activate
    public Builds(@Reference AppsSettings settings) {
        this.settings = settings;
    }

    private WorkflowArtifacts artifacts() {
        WorkflowArtifacts a = actions;
        if (a == null) {
            throw ApiException.unavailable("Actions is not running: the app's workers and containers are built by"
                    + " workflows (enable the feature actions)");
        }
        return a;
    }

    /** Every worker's and container's artifact at {@code source}'s commit, by key. */
    Map<String, Built> resolve(Caller caller, Manifest m, Sources.Resolved source) {
        Map<String, Built> out = new LinkedHashMap<>();
        for (var e : m.workers().entrySet()) {
            out.put(e.getKey(), one(caller, source, e.getKey(), e.getValue().build(), "worker-bundle"));
        }
        for (var e : m.containers().entrySet()) {
            out.put(e.getKey(), one(caller, source, e.getKey(), e.getValue().image(), "container-image"));
        }
        return out;
    }

    private Built one(Caller caller, Sources.Resolved source, String key, Manifest.FromWorkflow w, String kind) {
        String repo = source.repository().id();
        Optional<Artifact> found = artifacts().newest(repo, w.path(), source.commit(), w.job(), w.artifact());
        Artifact a;
        if (found.isPresent()) {
            a = found.get();
        } else {
            try {
                a = artifacts()
                        .build(
                                caller,
                                repo,
                                w.path(),
                                "tag".equals(source.refType()) ? "refs/tags/" + source.ref() : source.ref(),
                                source.commit(),
                                w.job(),
                                w.artifact(),
                                settings.buildTimeout);
            } catch (WorkflowArtifacts.BuildFailed e) {
                throw new ApiException(422, "BUILD_FAILED", key + ": " + e.getMessage());
            }
        }
        return read(a, w.artifactPath(), kind, key);
    }

    /** The artifact an app deployment's snapshot names, read again (for a rollback). */
    Built fromOrigin(String key, ObjectNode origin) {
        Artifact a = new Artifact(
                origin.path("artifact_id").asText(),
                origin.path("run_id").asText(),
                origin.path("repository_id").asText(),
                origin.path("workflow_path").asText(),
                origin.path("commit_sha").asText(),
                origin.path("job").asText(null),
                origin.path("artifact").asText(),
                origin.path("size").asLong(),
                Instant.parse(origin.path("created_at").asText(Instant.EPOCH.toString())));
        String path = origin.path("artifact_path").isTextual()
                ? origin.path("artifact_path").asText()
                : null;
        Built b = read(a, path, origin.path("kind").asText(), key);
        if (!b.digest().equals(origin.path("digest").asText())) {
            throw ApiException.conflict(
                    key + ": the artifact of that deployment changed since; it cannot be rolled back to");
        }
        return b;
    }

    private Built read(Artifact a, String path, String kind, String key) {
        byte[] bytes;
        try {
            bytes = artifacts().read(a, path, settings.maxArtifactBytes);
        } catch (IOException e) {
            throw new ApiException(
                    422,
                    "BUILD_FAILED",
                    key + ": artifact " + a.name() + " of run " + a.runId() + ": " + e.getMessage());
        }
        String digest = "sha256:" + hex(Digests.sha256(bytes));
        ObjectNode o = AppStore.JSON.createObjectNode();
        o.put("kind", kind);
        o.put("artifact_id", a.id());
        o.put("run_id", a.runId());
        o.put("repository_id", a.repositoryId());
        o.put("workflow_path", a.workflowPath());
        o.put("commit_sha", a.commitSha());
        o.put("job", a.jobName());
        o.put("artifact", a.name());
        o.put("artifact_path", path);
        o.put("size", a.size());
        o.put("created_at", a.createdAt() == null ? null : a.createdAt().toString());
        o.put("digest", digest);
        return new Built(kind, bytes, digest, o);
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder(b.length * 2);
        for (byte x : b) {
            s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return s.toString();
    }
}
