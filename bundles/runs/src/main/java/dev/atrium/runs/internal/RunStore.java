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
}
