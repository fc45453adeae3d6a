package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The agent_tasks table, which this bundle owns. It knows workspaces, threads and runs only by id. */
@Component(service = AgentTaskStore.class)
public class AgentTaskStore {

    static final Set<String> STATUSES = Set.of("todo", "in_progress", "done", "cancelled");
    static final Set<String> PRIORITIES = Set.of("low", "normal", "high", "urgent");
    /** Run statuses after which a run's outcome is known. */
    static final Set<String> TERMINAL_RUN = Set.of("completed", "failed", "cancelled");

    private static final String COLUMNS = "id, space_id, principal_id, title, description, status, priority, due_at, "
            + "thread_id, plan::text AS plan, run_id, last_run_status, created_at, updated_at";

    private final ObjectMapper json = JsonMappers.create();
    private final Sql sql;

    @Activate
    public AgentTaskStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    /** A row; {@code plan} is the stored plan's JSON text or null. */
    public record Task(
            String id,
            String spaceId,
            String principalId,
            String title,
            String description,
            String status,
            String priority,
            Instant dueAt,
            String threadId,
            String plan,
            String runId,
            String lastRunStatus,
            Instant createdAt,
            Instant updatedAt) {

        static Task of(ResultSet rs) throws SQLException {
            return new Task(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("principal_id"),
                    rs.getString("title"),
                    rs.getString("description"),
                    rs.getString("status"),
                    rs.getString("priority"),
                    Sql.instant(rs, "due_at"),
                    rs.getString("thread_id"),
                    rs.getString("plan"),
                    rs.getString("run_id"),
                    rs.getString("last_run_status"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    /** The fields a create sets or a PATCH changes; a PATCH's {@link Changes} says which. */
    public record Fields(
            String title, String description, String status, String priority, Instant dueAt, String threadId) {}

    /** Which fields of a PATCH were given (a given field may be null: cleared). */
    public record Changes(
            boolean title, boolean description, boolean status, boolean priority, boolean dueAt, boolean threadId) {
        boolean any() {
            return title || description || status || priority || dueAt || threadId;
        }
    }

    public Map<String, Object> toJson(Task t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", t.id());
        m.put("space_id", t.spaceId());
        m.put("title", t.title());
        m.put("description", t.description());
        m.put("status", t.status());
        m.put("priority", t.priority());
        m.put("due_at", t.dueAt() == null ? null : t.dueAt().toString());
        m.put("thread_id", t.threadId());
        m.put("plan", plan(t));
        m.put("run_id", t.runId());
        m.put("last_run_status", t.lastRunStatus());
        m.put("created_at", t.createdAt().toString());
        m.put("updated_at", t.updatedAt().toString());
        return m;
    }

    private JsonNode plan(Task t) {
        if (t.plan() == null) {
            return null;
        }
        try {
            return json.readTree(t.plan());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the stored plan of task " + t.id() + " is not JSON", e);
        }
    }

    public Task create(String spaceId, String principalId, Fields f) {
        return one(
                        "INSERT INTO agent_tasks (id, space_id, principal_id, title, description, status, priority, "
                                + "due_at, thread_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS,
                        Ids.id("task"),
                        spaceId,
                        principalId,
                        f.title(),
                        f.description(),
                        f.status() == null ? "todo" : f.status(),
                        f.priority() == null ? "normal" : f.priority(),
                        f.dueAt(),
                        f.threadId())
                .orElseThrow();
    }

    public Optional<Task> get(String id) {
        return one("SELECT " + COLUMNS + " FROM agent_tasks WHERE id = ?", id);
    }

    /** A page of a workspace's tasks, newest first; {@code status} and {@code priority} filter when not null. */
    public List<Task> list(String spaceId, String status, String priority, int limit, int offset) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM agent_tasks WHERE space_id = ? AND (?::text IS NULL OR status = ?) "
                        + "AND (?::text IS NULL OR priority = ?) ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                Task::of,
                spaceId,
                status,
                status,
                priority,
                priority,
                limit,
                offset);
    }

    public long count(String spaceId, String status, String priority) {
        return sql.count(
                "SELECT count(*) FROM agent_tasks WHERE space_id = ? AND (?::text IS NULL OR status = ?) "
                        + "AND (?::text IS NULL OR priority = ?)",
                spaceId,
                status,
                status,
                priority,
                priority);
    }

    /** Applies the fields {@code changes} names; empty when the task is gone. */
    public Optional<Task> update(String id, Fields f, Changes changes) {
        StringBuilder set = new StringBuilder("updated_at = now()");
        List<Object> args = new ArrayList<>();
        if (changes.title()) {
            set.append(", title = ?");
            args.add(f.title());
        }
        if (changes.description()) {
            set.append(", description = ?");
            args.add(f.description());
        }
        if (changes.status()) {
            set.append(", status = ?");
            args.add(f.status());
        }
        if (changes.priority()) {
            set.append(", priority = ?");
            args.add(f.priority());
        }
        if (changes.dueAt()) {
            set.append(", due_at = ?");
            args.add(f.dueAt());
        }
        if (changes.threadId()) {
            set.append(", thread_id = ?");
            args.add(f.threadId());
        }
        args.add(id);
        return one("UPDATE agent_tasks SET " + set + " WHERE id = ? RETURNING " + COLUMNS, args.toArray());
    }

    /** Stores a plan (a JSON object's text) on a task; empty when the task is gone. */
    public Optional<Task> storePlan(String id, String planJson) {
        return one(
                "UPDATE agent_tasks SET plan = ?::jsonb, updated_at = now() WHERE id = ? RETURNING " + COLUMNS,
                planJson,
                id);
    }

    /**
     * Starts a run for the task with its row locked, and links it: {@code start} gets the locked row and answers the
     * new run's id (or throws, which leaves the task as it was). Two starts of one task, on any instance, run one
     * after the other, so the second sees the first's run and is refused.
     */
    public Optional<Task> startRun(String id, String principalId, Function<Task, String> start) {
        return sql.tx(c -> {
            Optional<Task> locked =
                    Sql.one(c, "SELECT " + COLUMNS + " FROM agent_tasks WHERE id = ? FOR UPDATE", Task::of, id);
            if (locked.isEmpty()) {
                return Optional.<Task>empty();
            }
            String runId = start.apply(locked.get());
            return Sql.one(
                    c,
                    "UPDATE agent_tasks SET run_id = ?, principal_id = ?, last_run_status = 'queued', "
                            + "status = 'in_progress', updated_at = now() WHERE id = ? RETURNING " + COLUMNS,
                    Task::of,
                    runId,
                    principalId,
                    id);
        });
    }

    /**
     * Records what became of a task's run. A terminal outcome moves a task still {@code in_progress} to {@code done}
     * (completed) or back to {@code todo} (failed, cancelled); a status the user set meanwhile stays. Recorded once:
     * a known terminal outcome is not overwritten (the event and a reconcile may both report it).
     */
    public Optional<Task> recordRunStatus(String runId, String runStatus) {
        boolean terminal = TERMINAL_RUN.contains(runStatus);
        String next = "completed".equals(runStatus) ? "done" : "todo";
        return one(
                "UPDATE agent_tasks SET last_run_status = ?, updated_at = now(), status = CASE WHEN ? AND status = "
                        + "'in_progress' THEN ? ELSE status END WHERE run_id = ? AND (last_run_status IS NULL OR "
                        + "last_run_status NOT IN ('completed', 'failed', 'cancelled')) RETURNING " + COLUMNS,
                runStatus,
                terminal,
                next,
                runId);
    }

    /** Tasks whose run's outcome is not known yet, oldest first (for the reconcile). */
    public List<Task> awaitingRuns(int limit) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM agent_tasks WHERE run_id IS NOT NULL AND (last_run_status IS NULL OR "
                        + "last_run_status NOT IN ('completed', 'failed', 'cancelled')) ORDER BY updated_at LIMIT ?",
                Task::of,
                limit);
    }

    public boolean delete(String id) {
        return sql.update("DELETE FROM agent_tasks WHERE id = ?", id) == 1;
    }

    private Optional<Task> one(String statement, Object... args) {
        return sql.one(statement, Task::of, args);
    }
}
