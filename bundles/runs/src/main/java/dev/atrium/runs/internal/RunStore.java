package dev.atrium.runs.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The runs, run_events and run_artifacts tables. Events get ids 1, 2, 3, … per run: the next id is taken from the
 * run row under its row lock in the inserting transaction, which also sends {@code NOTIFY atrium_run_events} so
 * every instance's subscribers hear of it when it commits.
 */
@Component(service = RunStore.class)
public class RunStore {

    static final String EVENTS_CHANNEL = "atrium_run_events";
    static final String QUEUE_CHANNEL = "atrium_runs_queued";
    static final String CANCEL_CHANNEL = "atrium_run_cancel";
    static final Set<String> TERMINAL = Set.of("completed", "failed", "cancelled");
    static final Set<String> TERMINAL_EVENTS = Set.of("run.completed", "run.failed", "run.cancelled");
    /** The event type of a model's streamed text fragments. */
    static final String STREAMED = "message.delta";

    static final String COLUMNS =
            "id, thread_id, space_id, requester_principal_id, status, provider, model, error, instance_id, "
                    + "cancel_requested, last_event_id, created_at, started_at, finished_at";

    static final ObjectMapper JSON = JsonMappers.create();

    final Sql db;
    private final java.util.List<java.util.function.Consumer<Event>> committed =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    @Activate
    public RunStore(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.db = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    public record Run(
            String id,
            String threadId,
            String spaceId,
            String requester,
            String status,
            String provider,
            String model,
            String error,
            String instanceId,
            boolean cancelRequested,
            long lastEventId,
            Instant createdAt,
            Instant startedAt,
            Instant finishedAt) {
        static Run of(ResultSet rs) throws SQLException {
            return new Run(
                    rs.getString("id"),
                    rs.getString("thread_id"),
                    rs.getString("space_id"),
                    rs.getString("requester_principal_id"),
                    rs.getString("status"),
                    rs.getString("provider"),
                    rs.getString("model"),
                    rs.getString("error"),
                    rs.getString("instance_id"),
                    rs.getBoolean("cancel_requested"),
                    rs.getLong("last_event_id"),
                    instant(rs.getTimestamp("created_at")),
                    instant(rs.getTimestamp("started_at")),
                    instant(rs.getTimestamp("finished_at")));
        }

        boolean terminal() {
            return TERMINAL.contains(status);
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("thread_id", threadId);
            m.put("space_id", spaceId);
            m.put("status", status);
            m.put("provider", provider);
            m.put("model", model);
            m.put("error", error);
            m.put("last_event_id", lastEventId);
            m.put("created_at", str(createdAt));
            m.put("started_at", str(startedAt));
            m.put("finished_at", str(finishedAt));
            return m;
        }
    }

    /** A run event; its JSON text is made once, since every subscriber of the run sends the same bytes. */
    public record Event(String runId, long id, String type, JsonNode data, Instant createdAt, String json) {
        static Event of(ResultSet rs) throws SQLException {
            try {
                return of(
                        rs.getString("run_id"),
                        rs.getLong("id"),
                        rs.getString("type"),
                        JSON.readTree(rs.getString("data")),
                        rs.getTimestamp("created_at").toInstant());
            } catch (JsonProcessingException e) {
                throw new SQLException(e);
            }
        }

        static Event of(String runId, long id, String type, JsonNode data, Instant createdAt) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("run_id", runId);
            m.put("type", type);
            m.put("data", data);
            m.put("created_at", createdAt.toString());
            try {
                return new Event(runId, id, type, data, createdAt, JSON.writeValueAsString(m));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        boolean terminal() {
            return TERMINAL_EVENTS.contains(type);
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("run_id", runId);
            m.put("type", type);
            m.put("data", data);
            m.put("created_at", createdAt.toString());
            return m;
        }

        String toJsonText() {
            return json;
        }
    }

    /** An artifact; {@code content} is null when it was listed (a list reads only each content's size). */
    public record Artifact(
            String id, String runId, String name, String contentType, String content, long size, Instant createdAt) {
        static Artifact of(ResultSet rs) throws SQLException {
            return new Artifact(
                    rs.getString("id"),
                    rs.getString("run_id"),
                    rs.getString("name"),
                    rs.getString("content_type"),
                    rs.getString("content"),
                    rs.getLong("size"),
                    rs.getTimestamp("created_at").toInstant());
        }

        Map<String, Object> toJson(boolean withContent) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("run_id", runId);
            m.put("name", name);
            m.put("content_type", contentType);
            if (withContent) {
                m.put("content", content);
            }
            m.put("size", size);
            m.put("created_at", createdAt.toString());
            return m;
        }
    }

    static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    static String str(Instant i) {
        return i == null ? null : i.toString();
    }

    /**
     * Hears of every event this instance appends, right after its transaction commits: local subscribers get it
     * without waiting for the notification's round trip through PostgreSQL (which still tells the other instances).
     */
    void onCommitted(java.util.function.Consumer<Event> listener) {
        committed.add(listener);
    }

    void removeCommitted(java.util.function.Consumer<Event> listener) {
        committed.remove(listener);
    }

    private <T> T published(T result, Event event) {
        if (event != null) {
            for (java.util.function.Consumer<Event> l : committed) {
                try {
                    l.accept(event);
                } catch (RuntimeException e) {
                    org.slf4j.LoggerFactory.getLogger(RunStore.class).warn("a run event listener failed", e);
                }
            }
        }
        return result;
    }

    /** A queued run for {@code requester}; the first event is {@code run.queued}. Wakes every instance's dispatcher. */
    public Run create(String threadId, String spaceId, String requester, String provider, String model) {
        String id = Ids.id("run");
        Event[] queued = new Event[1];
        Run run = db.tx(c -> {
            Sql.update(
                    c,
                    "INSERT INTO runs (id, thread_id, space_id, requester_principal_id, provider, model) VALUES (?, ?, ?, ?, ?, ?)",
                    id,
                    threadId,
                    spaceId,
                    requester,
                    provider,
                    model);
            queued[0] = append(c, id, "run.queued", Map.of("status", "queued"));
            Sql.exec(c, "SELECT pg_notify(?, ?)", QUEUE_CHANNEL, id);
            return Sql.list(c, "SELECT " + COLUMNS + " FROM runs WHERE id = ?", Run::of, id)
                    .get(0);
        });
        return published(run, queued[0]);
    }

    public Optional<Run> get(String id) {
        return db.one("SELECT " + COLUMNS + " FROM runs WHERE id = ?", Run::of, id);
    }

    public List<Run> list(String threadId, boolean activeOnly, Instant beforeCreated, String beforeId, int limit) {
        return db.list(
                "SELECT " + COLUMNS + " FROM runs WHERE thread_id = ? AND (NOT ? OR status IN ('queued', 'running')) "
                        + "AND (?::timestamptz IS NULL OR (created_at, id) < (?::timestamptz, ?)) ORDER BY created_at DESC, id DESC LIMIT ?",
                Run::of,
                threadId,
                activeOnly,
                ts(beforeCreated),
                ts(beforeCreated),
                beforeId,
                limit);
    }

    /** A thread's runs after {@code (created_at, id)}, oldest first; a null instant starts at the beginning. */
    public List<Run> listAfter(String threadId, Instant after, String afterId, int limit) {
        return db.list(
                "SELECT " + COLUMNS + " FROM runs WHERE thread_id = ? "
                        + "AND (?::timestamptz IS NULL OR (created_at, id) > (?::timestamptz, ?)) ORDER BY created_at, id LIMIT ?",
                Run::of,
                threadId,
                ts(after),
                ts(after),
                afterId == null ? "" : afterId,
                limit);
    }

    private static Timestamp ts(Instant i) {
        return i == null ? null : Timestamp.from(i);
    }

    /**
     * Claims the oldest queued run that has a requester, for this instance. Rows without a requester are never
     * claimed (fail closed). {@code FOR UPDATE SKIP LOCKED}: instances never claim the same row.
     */
    public Optional<Run> claim(String instanceId) {
        Event[] started = new Event[1];
        Optional<Run> claimed = db.tx(c -> {
            List<Run> runs = Sql.list(
                    c,
                    "UPDATE runs SET status = 'running', instance_id = ?, started_at = now() WHERE id = "
                            + "(SELECT id FROM runs WHERE status = 'queued' AND requester_principal_id IS NOT NULL "
                            + "ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING " + COLUMNS,
                    Run::of,
                    instanceId);
            if (runs.isEmpty()) {
                return Optional.<Run>empty();
            }
            started[0] = append(c, runs.get(0).id(), "run.started", Map.of("status", "running"));
            return Optional.of(runs.get(0));
        });
        return published(claimed, started[0]);
    }

    /**
     * Moves a run that is not yet terminal to a terminal state and appends the matching event, in one transaction.
     * Returns false when it was already terminal (someone else finished it).
     */
    public boolean finish(String runId, String status, String error) {
        return finishFrom(runId, null, status, error);
    }

    /** As {@link #finish}, only when the run is in state {@code from} (null: queued or running). */
    public boolean finishFrom(String runId, String from, String status, String reason) {
        String error = NulText.clean(reason);
        Event[] terminal = new Event[1];
        boolean finished = db.tx(c -> {
            int n = Sql.update(
                    c,
                    "UPDATE runs SET status = ?, error = ?, finished_at = now() WHERE id = ? "
                            + "AND status IN ('queued', 'running') AND (?::text IS NULL OR status = ?)",
                    status,
                    error,
                    runId,
                    from,
                    from);
            if (n == 0) {
                return false;
            }
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("status", status);
            if (error != null) {
                data.put("reason", error);
            }
            terminal[0] = append(c, runId, "run." + status, data);
            return true;
        });
        return published(finished, terminal[0]);
    }

    /** The ids of this instance's runs still marked running. */
    public List<String> runningOn(String instanceId) {
        return db.list(
                "SELECT id FROM runs WHERE status = 'running' AND instance_id = ?", rs -> rs.getString(1), instanceId);
    }

    public List<String> runningInstances() {
        return db.list(
                "SELECT DISTINCT instance_id FROM runs WHERE status = 'running' AND instance_id IS NOT NULL",
                rs -> rs.getString(1));
    }

    public boolean requestCancel(String runId) {
        return db.tx(c -> {
            int n = Sql.update(c, "UPDATE runs SET cancel_requested = true WHERE id = ? AND status = 'running'", runId);
            if (n == 1) {
                Sql.exec(c, "SELECT pg_notify(?, ?)", CANCEL_CHANNEL, runId);
            }
            return n == 1;
        });
    }

    public boolean cancelRequested(String runId) {
        return db.one("SELECT cancel_requested FROM runs WHERE id = ?", rs -> rs.getBoolean(1), runId)
                .orElse(true);
    }

    /** Appends one event in one statement: numbering, row and notification are one round trip and one transaction. */
    public Event append(String runId, String type, Map<String, ?> data) {
        Event e = db.list(
                        STREAMED.equals(type) ? APPEND_STREAMED : APPEND, Event::of, appendArguments(runId, type, data))
                .get(0);
        return published(e, e);
    }

    /** Appends one event inside the caller's transaction, which commits durably whatever the event's type. */
    static Event append(java.sql.Connection c, String runId, String type, Map<String, ?> data) throws SQLException {
        return Sql.list(c, APPEND, Event::of, appendArguments(runId, type, data))
                .get(0);
    }

    private static final String APPEND =
            "WITH n AS (UPDATE runs SET last_event_id = last_event_id + 1 WHERE id = ? RETURNING last_event_id), "
                    + "e AS (INSERT INTO run_events (run_id, id, type, data) SELECT ?, last_event_id, ?, ?::jsonb FROM n "
                    + "RETURNING run_id, id, type, data::text AS data, created_at) "
                    + "SELECT e.*, pg_notify(?, e.run_id || ':' || e.id) FROM e";
    /**
     * A model's streamed fragment: its commit does not wait for the WAL flush (a 20-500 ms stall on a busy disk was
     * the whole tail of the streams' latency). The next event that is not a fragment (the message's completion
     * carries its whole text, or the run's end) flushes the WAL past it, so what can be lost is only fragments of a
     * run the database crashed under. Only for an append that is its own transaction: the setting holds until the
     * end of the transaction it runs in.
     */
    private static final String APPEND_STREAMED =
            APPEND + " CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed";

    private static Object[] appendArguments(String runId, String type, Map<String, ?> data) {
        String json;
        try {
            json = JSON.writeValueAsString(data);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
        return new Object[] {runId, runId, type, json, EVENTS_CHANNEL};
    }

    /** Events after {@code afterId}, in order. */
    public List<Event> events(String runId, long afterId, int limit) {
        return db.list(
                "SELECT run_id, id, type, data::text AS data, created_at FROM run_events WHERE run_id = ? AND id > ? "
                        + "ORDER BY id LIMIT ?",
                Event::of,
                runId,
                afterId,
                limit);
    }

    public List<Event> allEvents(String runId, long afterId) {
        List<Event> out = new ArrayList<>();
        long after = afterId;
        while (true) {
            List<Event> page = events(runId, after, 1000);
            out.addAll(page);
            if (page.size() < 1000) {
                return out;
            }
            after = page.get(page.size() - 1).id();
        }
    }

    /** Adds an artifact to a run that has not finished; empty when it has (atomically with the run's status). */
    public Optional<Artifact> addArtifact(String runId, String name, String contentType, String content) {
        return db.one(
                "INSERT INTO run_artifacts (id, run_id, name, content_type, content) SELECT ?, id, ?, ?, ? FROM runs "
                        + "WHERE id = ? AND status IN ('queued', 'running') "
                        + "RETURNING id, run_id, name, content_type, content, length(content) AS size, created_at",
                Artifact::of,
                Ids.id("art"),
                name,
                contentType,
                content,
                runId);
    }

    public List<Artifact> artifacts(String runId) {
        return db.list(
                "SELECT id, run_id, name, content_type, NULL AS content, length(content) AS size, created_at FROM run_artifacts "
                        + "WHERE run_id = ? "
                        + "ORDER BY created_at, id",
                Artifact::of,
                runId);
    }

    public Optional<Artifact> artifact(String id) {
        return db.one(
                "SELECT id, run_id, name, content_type, content, length(content) AS size, created_at FROM run_artifacts WHERE id = ?",
                Artifact::of,
                id);
    }

    /** What {@link #archive} hands on, one row at a time. */
    @FunctionalInterface
    public interface Sink<T> {
        void accept(T row) throws java.io.IOException;
    }

    private static final int ARCHIVE_PAGE = 500;

    /**
     * A workspace's runs, then their events, then their artifacts (with content), each oldest first, read in one
     * snapshot and a page at a time.
     *
     * @return how many runs
     */
    public long archive(String spaceId, Sink<Run> runs, Sink<Event> events, Sink<Artifact> artifacts)
            throws java.io.IOException {
        try {
            return db.snapshot(c -> {
                long n = 0;
                String afterId = "";
                while (true) {
                    List<Run> page = Sql.list(
                            c,
                            "SELECT " + COLUMNS + " FROM runs WHERE space_id = ? AND id > ? ORDER BY id LIMIT "
                                    + ARCHIVE_PAGE,
                            Run::of,
                            spaceId,
                            afterId);
                    for (Run r : page) {
                        give(runs, r);
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
                        give(events, e);
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
                        give(artifacts, a);
                    }
                    if (page.size() < 50) {
                        return n;
                    }
                    afterArtifact = page.get(page.size() - 1).id();
                }
            });
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private static <T> void give(Sink<T> sink, T row) {
        try {
            sink.accept(row);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
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
}
