package dev.atrium.runs.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import dev.atrium.runs.internal.RunStore.Artifact;
import dev.atrium.runs.internal.RunStore.Event;
import dev.atrium.runs.internal.RunStore.Run;
import java.io.IOException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The runs, run_events and run_artifacts rows of a workspace archive: read in one snapshot, written back with new ids. */
final class ArchivedRuns {

    private final Sql db;

    ArchivedRuns(Sql db) {
        this.db = db;
    }

    private static final int ARCHIVE_PAGE = 500;

    /**
     * A workspace's runs, then their events, then their artifacts (with content), each oldest first, read in one
     * snapshot and a page at a time.
     *
     * @return how many runs
     */
    public long archive(
            String spaceId, Sql.RowSink<Run> runs, Sql.RowSink<Event> events, Sql.RowSink<Artifact> artifacts)
            throws IOException {
        return db.snapshotStreaming(c -> {
            long n = 0;
            String afterId = "";
            while (true) {
                List<Run> page = Sql.list(
                        c,
                        "SELECT " + RunStore.COLUMNS + " FROM runs WHERE space_id = ? AND id > ? ORDER BY id LIMIT "
                                + ARCHIVE_PAGE,
                        Run::of,
                        spaceId,
                        afterId);
                for (Run r : page) {
                    runs.accept(r);
                    n++;
                }
                if (page.size() < ARCHIVE_PAGE) {
                    break;
                }
                afterId = page.get(page.size() - 1).id();
            }
            String afterRun = "";
            long afterEvent = 0;
            while (true) {
                List<Event> page = Sql.list(
                        c,
                        "SELECT e.run_id, e.id, e.type, e.data, e.created_at FROM run_events e JOIN runs r ON r.id = e.run_id "
                                + "WHERE r.space_id = ? AND (e.run_id, e.id) > (?, ?) ORDER BY e.run_id, e.id LIMIT "
                                + ARCHIVE_PAGE,
                        Event::of,
                        spaceId,
                        afterRun,
                        afterEvent);
                for (Event e : page) {
                    events.accept(e);
                }
                if (page.size() < ARCHIVE_PAGE) {
                    break;
                }
                afterRun = page.get(page.size() - 1).runId();
                afterEvent = page.get(page.size() - 1).id();
            }
            String afterArtifact = "";
            while (true) {
                // artifacts can be large: a smaller page
                List<Artifact> page = Sql.list(
                        c,
                        "SELECT a.id, a.run_id, a.name, a.content_type, a.content, length(a.content) AS size, a.created_at "
                                + "FROM run_artifacts a JOIN runs r ON r.id = a.run_id "
                                + "WHERE r.space_id = ? AND a.id > ? ORDER BY a.id LIMIT 50",
                        Artifact::of,
                        spaceId,
                        afterArtifact);
                for (Artifact a : page) {
                    artifacts.accept(a);
                }
                if (page.size() < 50) {
                    return n;
                }
                afterArtifact = page.get(page.size() - 1).id();
            }
        });
    }

    /** A run brought back from a workspace archive: a new id, no instance, its times as they were. */
    public String restore(
            String threadId,
            String spaceId,
            String requester,
            String status,
            String provider,
            String model,
            String error,
            Instant createdAt,
            Instant startedAt,
            Instant finishedAt) {
        String id = Ids.id("run");
        db.update(
                "INSERT INTO runs (id, thread_id, space_id, requester_principal_id, status, provider, model, error, "
                        + "created_at, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                id,
                threadId,
                spaceId,
                requester,
                status,
                provider,
                model,
                error,
                ts(createdAt),
                ts(startedAt),
                ts(finishedAt));
        return id;
    }

    /** Archived events of restored runs, with their ids, in one transaction; each run's last event id follows them. */
    public void restoreEvents(List<Event> events) {
        if (events.isEmpty()) {
            return;
        }
        db.tx(c -> {
            Map<String, Long> last = new LinkedHashMap<>();
            try (java.sql.PreparedStatement insert = c.prepareStatement(
                    "INSERT INTO run_events (run_id, id, type, data, created_at) VALUES (?, ?, ?, ?::jsonb, ?)")) {
                for (Event e : events) {
                    insert.setString(1, e.runId());
                    insert.setLong(2, e.id());
                    insert.setString(3, e.type());
                    insert.setString(4, e.data().toString());
                    insert.setTimestamp(5, ts(e.createdAt()));
                    insert.addBatch();
                    last.merge(e.runId(), e.id(), Math::max);
                }
                insert.executeBatch();
            }
            for (Map.Entry<String, Long> l : last.entrySet()) {
                Sql.update(
                        c,
                        "UPDATE runs SET last_event_id = greatest(last_event_id, ?) WHERE id = ?",
                        l.getValue(),
                        l.getKey());
            }
            return null;
        });
    }

    /** An archived artifact of a restored run; its new id. */
    public String restoreArtifact(String runId, String name, String contentType, String content, Instant createdAt) {
        String id = Ids.id("art");
        db.update(
                "INSERT INTO run_artifacts (id, run_id, name, content_type, content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                id,
                runId,
                name,
                contentType,
                content,
                ts(createdAt));
        return id;
    }

    /** Removes a workspace's runs with their events and artifacts (a failed import's). */
    public void deleteAll(String spaceId) {
        db.update("DELETE FROM runs WHERE space_id = ?", spaceId);
    }

    private static Timestamp ts(Instant i) {
        return i == null ? null : Timestamp.from(i);
    }
}
