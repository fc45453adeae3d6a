package dev.atrium.actions.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The Actions tables, which this bundle owns: runs, jobs, their events, secrets, artifacts, caches, workflows. */
@Component(service = ActionStore.class)
public class ActionStore {

    static final String EVENTS_CHANNEL = "atrium_action_events";
    static final ObjectMapper JSON = JsonMappers.create();

    private static final String RUN = "id, repo_id, number, workflow_path, name, event, ref, commit_id, actor_id,"
            + " principal_id, from_fork, inputs::text AS inputs, workflow, concurrency_group, cancel_in_progress, status,"
            + " conclusion, reason, attempt, created_at, started_at, completed_at";
    private static final String JOB = "id, run_id, seq, job_key, name, matrix::text AS matrix, needs::text AS needs,"
            + " runs_on, status, conclusion, reason, attempt, outputs::text AS outputs, steps::text AS steps, log_key,"
            + " log_bytes, created_at, started_at, completed_at";
    private static final String ARTIFACT =
            "id, repo_id, run_id, job_id, name, size, files, blob_key, created_at, expires_at";

    private final Sql sql;

    @Activate
    public ActionStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    Sql sql() {
        return sql;
    }

    // ------------------------------------------------------------------------------------------------ records

    record Run(
            String id,
            String repoId,
            int number,
            String workflowPath,
            String name,
            String event,
            String ref,
            String commitId,
            String actorId,
            String principalId,
            boolean fromFork,
            Map<String, String> inputs,
            String workflow,
            String concurrencyGroup,
            boolean cancelInProgress,
            String status,
            String conclusion,
            String reason,
            int attempt,
            Instant createdAt,
            Instant startedAt,
            Instant completedAt) {

        static Run of(ResultSet rs) throws SQLException {
            return new Run(
                    rs.getString("id"),
                    rs.getString("repo_id"),
                    rs.getInt("number"),
                    rs.getString("workflow_path"),
                    rs.getString("name"),
                    rs.getString("event"),
                    rs.getString("ref"),
                    rs.getString("commit_id"),
                    rs.getString("actor_id"),
                    rs.getString("principal_id"),
                    rs.getBoolean("from_fork"),
                    read(rs.getString("inputs"), new TypeReference<Map<String, String>>() {}),
                    rs.getString("workflow"),
                    rs.getString("concurrency_group"),
                    rs.getBoolean("cancel_in_progress"),
                    rs.getString("status"),
                    rs.getString("conclusion"),
                    rs.getString("reason"),
                    rs.getInt("attempt"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "started_at"),
                    Sql.instant(rs, "completed_at"));
        }
    }

    /** One step as a job records it: {@code status} queued, in_progress or completed; the log offset where it began. */
    record Step(
            int number,
            String name,
            String status,
            String conclusion,
            String startedAt,
            String completedAt,
            long logOffset) {

        Step with(String status, String conclusion, Instant startedAt, Instant completedAt, long logOffset) {
            return new Step(
                    number,
                    name,
                    status,
                    conclusion,
                    startedAt == null ? null : startedAt.toString(),
                    completedAt == null ? null : completedAt.toString(),
                    logOffset);
        }

        Instant started() {
            return startedAt == null ? null : Instant.parse(startedAt);
        }

        Instant completed() {
            return completedAt == null ? null : Instant.parse(completedAt);
        }
    }

    record Job(
            String id,
            String runId,
            long seq,
            String key,
            String name,
            Map<String, Object> matrix,
            List<String> needs,
            String runsOn,
            String status,
            String conclusion,
            String reason,
            int attempt,
            Map<String, String> outputs,
            List<Step> steps,
            String logKey,
            long logBytes,
            Instant createdAt,
            Instant startedAt,
            Instant completedAt) {

        static Job of(ResultSet rs) throws SQLException {
            String matrix = rs.getString("matrix");
            return new Job(
                    rs.getString("id"),
                    rs.getString("run_id"),
                    rs.getLong("seq"),
                    rs.getString("job_key"),
                    rs.getString("name"),
                    matrix == null ? null : read(matrix, new TypeReference<Map<String, Object>>() {}),
                    read(rs.getString("needs"), new TypeReference<List<String>>() {}),
                    rs.getString("runs_on"),
                    rs.getString("status"),
                    rs.getString("conclusion"),
                    rs.getString("reason"),
                    rs.getInt("attempt"),
                    read(rs.getString("outputs"), new TypeReference<Map<String, String>>() {}),
                    read(rs.getString("steps"), new TypeReference<List<Step>>() {}),
                    rs.getString("log_key"),
                    rs.getLong("log_bytes"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "started_at"),
                    Sql.instant(rs, "completed_at"));
        }
    }

    record Artifact(
            String id,
            String repoId,
            String runId,
            String jobId,
            String name,
            long size,
            int files,
            String blobKey,
            Instant createdAt,
            Instant expiresAt) {

        static Artifact of(ResultSet rs) throws SQLException {
            return new Artifact(
                    rs.getString("id"),
                    rs.getString("repo_id"),
                    rs.getString("run_id"),
                    rs.getString("job_id"),
                    rs.getString("name"),
                    rs.getLong("size"),
                    rs.getInt("files"),
                    rs.getString("blob_key"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "expires_at"));
        }
    }

    record Event(String runId, long position, String type, String data) {}

    record WorkflowFile(
            String repoId,
            String path,
            String name,
            String content,
            String commitId,
            String error,
            Integer errorLine,
            Instant scheduledUntil,
            Instant updatedAt) {

        static WorkflowFile of(ResultSet rs) throws SQLException {
            int line = rs.getInt("error_line");
            return new WorkflowFile(
                    rs.getString("repo_id"),
                    rs.getString("path"),
                    rs.getString("name"),
                    rs.getString("content"),
                    rs.getString("commit_id"),
                    rs.getString("error"),
                    rs.wasNull() ? null : line,
                    Sql.instant(rs, "scheduled_until"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    static <T> T read(String json, TypeReference<T> type) {
        try {
            return JSON.readValue(json, type);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a stored value is not the JSON it was written as", e);
        }
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    // ------------------------------------------------------------------------------------------------ runs

    Optional<Run> run(String repoId, String runId) {
        return sql.one("SELECT " + RUN + " FROM action_runs WHERE id = ? AND repo_id = ?", Run::of, runId, repoId);
    }

    Optional<Run> run(String runId) {
        return sql.one("SELECT " + RUN + " FROM action_runs WHERE id = ?", Run::of, runId);
    }

    static Optional<Run> run(Connection c, String runId) throws SQLException {
        return Sql.one(c, "SELECT " + RUN + " FROM action_runs WHERE id = ? FOR UPDATE", Run::of, runId);
    }

    /** Runs of a repository, newest first, filtered by what is given. */
    List<Run> runs(String repoId, RunFilter f, int limit, int offset) {
        return sql.list(
                "SELECT " + RUN + " FROM action_runs WHERE repo_id = ?" + f.where()
                        + " ORDER BY number DESC LIMIT ? OFFSET ?",
                Run::of,
                f.arguments(repoId, limit, offset));
    }

    long countRuns(String repoId, RunFilter f) {
        Object[] args = f.arguments(repoId);
        return sql.count("SELECT count(*) FROM action_runs WHERE repo_id = ?" + f.where(), args);
    }

    record RunFilter(String status, String event, String branch, String workflow, String actor) {
        String where() {
            StringBuilder w = new StringBuilder();
            if (status != null) {
                w.append(
                        status.equals("queued") || status.equals("in_progress") || status.equals("completed")
                                ? " AND status = ?"
                                : " AND conclusion = ?");
            }
            if (event != null) {
                w.append(" AND event = ?");
            }
            if (branch != null) {
                w.append(" AND ref = ?");
            }
            if (workflow != null) {
                w.append(" AND workflow_path = ?");
            }
            if (actor != null) {
                w.append(" AND actor_id = ?");
            }
            return w.toString();
        }

        Object[] arguments(String repoId, Object... tail) {
            List<Object> a = new java.util.ArrayList<>();
            a.add(repoId);
            for (String v :
                    new String[] {status, event, branch == null ? null : "refs/heads/" + branch, workflow, actor}) {
                if (v != null) {
                    a.add(v);
                }
            }
            a.addAll(List.of(tail));
            return a.toArray();
        }
    }

    // ------------------------------------------------------------------------------------------------ jobs

    List<Job> jobs(String runId) {
        return sql.list("SELECT " + JOB + " FROM action_jobs WHERE run_id = ? ORDER BY seq", Job::of, runId);
    }

    static List<Job> jobs(Connection c, String runId) throws SQLException {
        return Sql.list(c, "SELECT " + JOB + " FROM action_jobs WHERE run_id = ? ORDER BY seq", Job::of, runId);
    }

    Optional<Job> job(String jobId) {
        return sql.one("SELECT " + JOB + " FROM action_jobs WHERE id = ?", Job::of, jobId);
    }

    static Optional<Job> job(Connection c, String jobId) throws SQLException {
        return Sql.one(c, "SELECT " + JOB + " FROM action_jobs WHERE id = ? FOR UPDATE", Job::of, jobId);
    }

    /** The repository a job belongs to, or empty. */
    Optional<String> repoOfJob(String jobId) {
        return sql.one(
                "SELECT r.repo_id FROM action_jobs j JOIN action_runs r ON r.id = j.run_id WHERE j.id = ?",
                rs -> rs.getString(1),
                jobId);
    }

    /**
     * Locks the run of a job first: every transaction that changes jobs takes its run's row before any job's, so two of
     * them never wait for each other's rows (a deadlock).
     */
    static void lockRunOf(Connection c, String jobId) throws SQLException {
        Sql.exec(
                c,
                "SELECT r.id FROM action_runs r JOIN action_jobs j ON j.run_id = r.id WHERE j.id = ? FOR UPDATE OF r",
                jobId);
    }

    static void saveSteps(Connection c, String jobId, List<Step> steps) throws SQLException {
        Sql.update(c, "UPDATE action_jobs SET steps = ?::jsonb WHERE id = ?", json(steps), jobId);
    }

    // ------------------------------------------------------------------------------------------------ events

    private static final String APPEND =
            "WITH n AS (UPDATE action_runs SET last_event = last_event + 1 WHERE id = ? RETURNING last_event), "
                    + "e AS (INSERT INTO action_events (run_id, position, type, data) SELECT ?, last_event, ?, ?::jsonb FROM n "
                    + "RETURNING run_id, position, type, data::text AS data) "
                    + "SELECT e.*, pg_notify(?, e.run_id || ':' || e.position) FROM e";

    /** Appends an event inside the caller's transaction (which holds the run's row lock until it commits). */
    static Event append(Connection c, String runId, String type, Map<String, ?> data) throws SQLException {
        return Sql.list(
                        c,
                        APPEND,
                        rs -> new Event(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4)),
                        runId,
                        runId,
                        type,
                        json(data),
                        EVENTS_CHANNEL)
                .get(0);
    }

    List<Event> events(String runId, long after, int limit) {
        return sql.list(
                "SELECT run_id, position, type, data::text FROM action_events WHERE run_id = ? AND position > ?"
                        + " ORDER BY position LIMIT ?",
                rs -> new Event(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4)),
                runId,
                after,
                limit);
    }

    /** Whether the event at {@code position} is the run's end and no rerun came after it. */
    boolean lastEnd(String runId, long position) {
        return sql.count(
                        "SELECT count(*) FROM action_runs r WHERE r.id = ? AND r.status = 'completed' AND NOT EXISTS"
                                + " (SELECT 1 FROM action_events e WHERE e.run_id = r.id AND e.position > ?"
                                + " AND e.type = 'run.rerun')",
                        runId,
                        position)
                > 0;
    }

    boolean runEnded(String runId) {
        return sql.count("SELECT count(*) FROM action_runs WHERE id = ? AND status = 'completed'", runId) > 0;
    }

    // ------------------------------------------------------------------------------------------------ artifacts

    List<Artifact> artifacts(String runId) {
        return sql.list(
                "SELECT " + ARTIFACT
                        + " FROM action_artifacts WHERE run_id = ? AND expires_at > now() ORDER BY created_at, name",
                Artifact::of,
                runId);
    }

    Optional<Artifact> artifact(String repoId, String artifactId) {
        return sql.one(
                "SELECT " + ARTIFACT + " FROM action_artifacts WHERE id = ? AND repo_id = ? AND expires_at > now()",
                Artifact::of,
                artifactId,
                repoId);
    }

    Optional<Artifact> artifactByName(String runId, String name) {
        return sql.one(
                "SELECT " + ARTIFACT + " FROM action_artifacts WHERE run_id = ? AND name = ? AND expires_at > now()",
                Artifact::of,
                runId,
                name);
    }

    List<Artifact> expiredArtifacts(int limit) {
        return sql.list(
                "SELECT " + ARTIFACT + " FROM action_artifacts WHERE expires_at <= now() LIMIT ?", Artifact::of, limit);
    }

    // ------------------------------------------------------------------------------------------------ workflows

    List<WorkflowFile> workflows(String repoId) {
        return sql.list("SELECT * FROM action_workflows WHERE repo_id = ? ORDER BY path", WorkflowFile::of, repoId);
    }

    Optional<WorkflowFile> workflow(String repoId, String path) {
        return sql.one("SELECT * FROM action_workflows WHERE repo_id = ? AND path = ?", WorkflowFile::of, repoId, path);
    }

    List<WorkflowFile> scheduledWorkflows() {
        return sql.list(
                "SELECT * FROM action_workflows WHERE error IS NULL AND content LIKE '%schedule%' ORDER BY repo_id, path",
                WorkflowFile::of);
    }

    /** Every repository this bundle has rows of. */
    List<String> repositories() {
        return sql.list(
                "SELECT repo_id FROM action_workflows UNION SELECT repo_id FROM action_runs"
                        + " UNION SELECT repo_id FROM action_secrets UNION SELECT repo_id FROM action_caches",
                rs -> rs.getString(1));
    }
}
