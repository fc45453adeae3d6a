package dev.atrium.runs.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Agent runs in a workspace archive, as their record: {@code runs/runs.jsonl} (one run a line, {@code key} its id in
 * the archive and {@code thread} its thread's key in the threads part), {@code runs/events.jsonl} (each run's event
 * stream, {@code run} the run's key) and {@code runs/artifacts.jsonl} (with their content; an {@code artifact.created}
 * event names its artifact's new id after an import). Restored after the threads,
 * each run on its thread's new id; a run whose thread the archive did not bring back is left out with its events. A
 * run that was still queued or running when the archive was made comes back cancelled: the server that imports it
 * does not start it again.
 */
@Component(service = WorkspaceArchivePart.class)
public class RunsArchivePart implements WorkspaceArchivePart {

    static final String RUNS = "runs.jsonl";
    static final String EVENTS = "events.jsonl";
    static final String ARTIFACTS = "artifacts.jsonl";
    static final String INTERRUPTED = "the run was in progress when its workspace was exported";
    private static final int BATCH = 500;
    private static final Set<String> STATUSES = Set.of("queued", "running", "completed", "failed", "cancelled");

    private final ArchivedRuns rows;

    @Activate
    public RunsArchivePart(@Reference RunStore runs) {
        this.rows = new ArchivedRuns(runs.db);
    }

    @Override
    public String name() {
        return "runs";
    }

    @Override
    public Set<String> after() {
        return Set.of("threads");
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines runs = out.lines(RUNS);
        Lines[] events = {null};
        Lines[] artifacts = {null};
        return rows.archive(
                space.id(),
                r -> {
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("key", r.id());
                    line.put("thread", r.threadId());
                    line.put("status", r.status());
                    line.put("provider", r.provider());
                    line.put("model", r.model());
                    line.put("error", r.error());
                    line.put("created_at", RunStore.str(r.createdAt()));
                    line.put("started_at", RunStore.str(r.startedAt()));
                    line.put("finished_at", RunStore.str(r.finishedAt()));
                    runs.add(line);
                },
                e -> {
                    if (events[0] == null) {
                        events[0] = out.lines(EVENTS);
                    }
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("run", e.runId());
                    line.put("id", e.id());
                    line.put("type", e.type());
                    line.put("data", e.data());
                    line.put("created_at", e.createdAt().toString());
                    events[0].add(line);
                },
                a -> {
                    if (artifacts[0] == null) {
                        artifacts[0] = out.lines(ARTIFACTS);
                    }
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("key", a.id());
                    line.put("run", a.runId());
                    line.put("name", a.name());
                    line.put("content_type", a.contentType());
                    line.put("content", a.content());
                    line.put("created_at", a.createdAt().toString());
                    artifacts[0].add(line);
                });
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        // archive key → new id; a run left out (its thread is not here) maps to null
        Map<String, String> runIds = new HashMap<>();
        Map<String, Long> lastEvent = new HashMap<>();
        Set<String> interrupted = new HashSet<>();
        long[] made = {0};
        in.lines(RUNS, line -> {
            NulText.reject(line);
            JsonBody b = JsonBody.of(line);
            String key = b.text("key", 1, 200);
            if (runIds.containsKey(key)) {
                throw ApiException.badRequest("runs: the key " + key + " is given twice");
            }
            String thread = in.idOf("threads", b.text("thread", 1, 200)).orElse(null);
            if (thread == null) {
                runIds.put(key, null);
                return;
            }
            String status =
                    b.oneOf("status", STATUSES).orElseThrow(() -> ApiException.badRequest("runs: status is required"));
            boolean inProgress = !RunStore.TERMINAL.contains(status);
            Instant created = instant(b, "created_at");
            String id = rows.restore(
                    thread,
                    space.id(),
                    space.ownerPrincipalId(),
                    inProgress ? "cancelled" : status,
                    b.optionalText("provider", 1, 200).orElse(null),
                    b.optionalText("model", 1, 200).orElse(null),
                    inProgress ? INTERRUPTED : b.string("error").orElse(null),
                    created,
                    optionalInstant(b, "started_at"),
                    inProgress ? Instant.now() : optionalInstant(b, "finished_at"));
            runIds.put(key, id);
            if (inProgress) {
                interrupted.add(id);
            }
            made[0]++;
        });
        Map<String, String> artifactIds = new HashMap<>();
        in.lines(ARTIFACTS, line -> {
            NulText.reject(line);
            JsonBody b = JsonBody.of(line);
            String key = b.requiredString("run");
            if (!runIds.containsKey(key)) {
                throw ApiException.badRequest("runs: an artifact names a run the archive does not have");
            }
            String run = runIds.get(key);
            if (run == null) {
                return;
            }
            String artifact = rows.restoreArtifact(
                    run,
                    b.text("name", 1, 200),
                    b.text("content_type", 1, 200),
                    b.requiredString("content"),
                    instant(b, "created_at"));
            b.optionalText("key", 1, 200).ifPresent(k -> artifactIds.put(k, artifact));
        });
        List<RunStore.Event> pending = new ArrayList<>();
        in.lines(EVENTS, line -> {
            NulText.reject(line);
            JsonBody b = JsonBody.of(line);
            String key = b.requiredString("run");
            if (!runIds.containsKey(key)) {
                throw ApiException.badRequest("runs: an event names a run the archive does not have");
            }
            String run = runIds.get(key);
            if (run == null) {
                return;
            }
            JsonNode idNode = line.get("id");
            if (idNode == null || !idNode.isIntegralNumber() || !idNode.canConvertToLong() || idNode.longValue() < 1) {
                throw ApiException.badRequest("runs: an event's id must be a positive integer");
            }
            long id = idNode.longValue();
            if (id <= lastEvent.getOrDefault(run, 0L)) {
                throw ApiException.badRequest("runs: the events of a run must come with rising ids");
            }
            JsonNode data = line.get("data");
            if (data == null || !data.isObject()) {
                throw ApiException.badRequest("runs: an event's data must be an object");
            }
            String type = b.text("type", 1, 100);
            if (type.equals("artifact.created")
                    && artifactIds.containsKey(data.path("artifact_id").asText())) {
                // the event names the artifact by its id here, as the run's own event did
                data = ((ObjectNode) data.deepCopy())
                        .put(
                                "artifact_id",
                                artifactIds.get(data.path("artifact_id").asText()));
            }
            pending.add(RunStore.Event.of(run, id, type, data, instant(b, "created_at")));
            lastEvent.put(run, id);
            if (pending.size() == BATCH) {
                rows.restoreEvents(pending);
                pending.clear();
            }
        });
        for (String run : interrupted) {
            // a subscriber to its events sees it end, as it would have here
            pending.add(RunStore.Event.of(
                    run,
                    lastEvent.getOrDefault(run, 0L) + 1,
                    "run.cancelled",
                    RunStore.JSON.createObjectNode().put("status", "cancelled").put("reason", INTERRUPTED),
                    Instant.now()));
        }
        rows.restoreEvents(pending);
        return made[0];
    }

    @Override
    public void discard(SpaceRef space) {
        rows.deleteAll(space.id());
    }

    private static Instant instant(JsonBody b, String field) {
        try {
            return Instant.parse(b.requiredString(field));
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("runs: " + field + " must be an ISO-8601 instant");
        }
    }

    private static Instant optionalInstant(JsonBody b, String field) {
        return b.string(field).isPresent() ? instant(b, field) : null;
    }
}
