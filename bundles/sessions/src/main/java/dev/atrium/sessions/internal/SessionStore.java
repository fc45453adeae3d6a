package dev.atrium.sessions.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The {@code sync_sessions} table, which this bundle owns. Every change of state is one conditional update on the
 * state it leaves, so two servers on the database (or a request and the reaper) cannot both move a session.
 */
@Component(service = SessionStore.class)
public class SessionStore {

    static final String ACTIVE = "active";
    static final String STOPPED = "stopped";
    static final String DISCARDED = "discarded";
    static final String EXPIRED = "expired";

    private static final String COLUMNS = "id, space_id, repo_id, principal_id, branch, base_commit, state,"
            + " idle_timeout_s, last_heartbeat_at, expires_at, commit_id, created_at, updated_at, ended_at,"
            + " expires_at < now() AS overdue";

    private final Sql sql;

    @Activate
    public SessionStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    /**
     * A session row.
     *
     * @param overdue whether it is active past its expiry (the reaper has not come by yet)
     */
    record Session(
            String id,
            String spaceId,
            String repoId,
            String principalId,
            String branch,
            String baseCommit,
            String state,
            int idleTimeoutSeconds,
            Instant lastHeartbeatAt,
            Instant expiresAt,
            String commitId,
            Instant createdAt,
            Instant updatedAt,
            Instant endedAt,
            boolean overdue) {

        static Session of(ResultSet rs) throws SQLException {
            return new Session(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("repo_id"),
                    rs.getString("principal_id"),
                    rs.getString("branch"),
                    rs.getString("base_commit"),
                    rs.getString("state"),
                    rs.getInt("idle_timeout_s"),
                    Sql.instant(rs, "last_heartbeat_at"),
                    Sql.instant(rs, "expires_at"),
                    rs.getString("commit_id"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"),
                    Sql.instant(rs, "ended_at"),
                    rs.getBoolean("overdue"));
        }

        boolean active() {
            return ACTIVE.equals(state);
        }

        /** The session as the API shows it; {@code repoName} is the repository's current name. */
        Map<String, Object> toJson(String repoName) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("repo_id", repoId);
            m.put("repo", repoName);
            m.put("branch", branch);
            m.put("base", baseCommit);
            m.put("state", state);
            m.put("idle_timeout_s", idleTimeoutSeconds);
            m.put("last_heartbeat_at", lastHeartbeatAt.toString());
            m.put("expires_at", expiresAt.toString());
            m.put("commit", commitId);
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            m.put("ended_at", endedAt == null ? null : endedAt.toString());
            return m;
        }
    }

    Optional<Session> get(String id) {
        return sql.one("SELECT " + COLUMNS + " FROM sync_sessions WHERE id = ?", Session::of, id);
    }

    Session create(
            String spaceId, String repoId, String principalId, String branch, String base, int idleTimeoutSeconds) {
        String id = Ids.id("ses");
        return sql.one(
                        "INSERT INTO sync_sessions (id, space_id, repo_id, principal_id, branch, base_commit, state,"
                                + " idle_timeout_s, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'active', ?,"
                                + " now() + make_interval(secs => ?)) RETURNING " + COLUMNS,
                        Session::of,
                        id,
                        spaceId,
                        repoId,
                        principalId,
                        branch,
                        base,
                        idleTimeoutSeconds,
                        idleTimeoutSeconds)
                .orElseThrow();
    }

    /** Pushes an active session's expiry out by its idle timeout; false when it is no longer active. */
    boolean touch(String id, boolean heartbeat) {
        return sql.update(
                        "UPDATE sync_sessions SET expires_at = now() + make_interval(secs => idle_timeout_s),"
                                + (heartbeat ? " last_heartbeat_at = now()," : "")
                                + " updated_at = now() WHERE id = ? AND state = 'active'",
                        id)
                == 1;
    }

    /** An active session becomes stopped, with the commit its stop made (null: none). */
    boolean stop(String id, String commitId) {
        return sql.update(
                        "UPDATE sync_sessions SET state = 'stopped', commit_id = ?, updated_at = now()"
                                + " WHERE id = ? AND state = 'active'",
                        commitId,
                        id)
                == 1;
    }

    /** A stopped session is active again on {@code base}, with a fresh expiry. */
    boolean resume(String id, String base) {
        return sql.update(
                        "UPDATE sync_sessions SET state = 'active', base_commit = ?, last_heartbeat_at = now(),"
                                + " expires_at = now() + make_interval(secs => idle_timeout_s), updated_at = now()"
                                + " WHERE id = ? AND state = 'stopped'",
                        base,
                        id)
                == 1;
    }

    /** An active session's work tree now stands on {@code base} (a resume onto the branch's new head). */
    boolean rebase(String id, String base) {
        return sql.update(
                        "UPDATE sync_sessions SET base_commit = ?, last_heartbeat_at = now(),"
                                + " expires_at = now() + make_interval(secs => idle_timeout_s), updated_at = now()"
                                + " WHERE id = ? AND state = 'active'",
                        base,
                        id)
                == 1;
    }

    /** An active or stopped session is discarded. */
    boolean discard(String id) {
        return sql.update(
                        "UPDATE sync_sessions SET state = 'discarded', updated_at = now(), ended_at = now()"
                                + " WHERE id = ? AND state IN ('active', 'stopped')",
                        id)
                == 1;
    }

    /** An active session past its expiry is expired; false when it is not (any more) overdue. */
    boolean expire(String id) {
        return sql.update(
                        "UPDATE sync_sessions SET state = 'expired', updated_at = now(), ended_at = now()"
                                + " WHERE id = ? AND state = 'active' AND expires_at < now()",
                        id)
                == 1;
    }

    /** Active sessions past their expiry, oldest first. */
    List<String> overdue(int limit) {
        return sql.list(
                "SELECT id FROM sync_sessions WHERE state = 'active' AND expires_at < now() ORDER BY expires_at"
                        + " LIMIT ?",
                rs -> rs.getString(1),
                limit);
    }

    /** Which of {@code ids} are sessions that still have a work tree to keep (active ones). */
    List<String> activeAmong(List<String> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        return sql.list(
                "SELECT id FROM sync_sessions WHERE state = 'active' AND id = ANY (?)", rs -> rs.getString(1), (Object)
                        ids.toArray(String[]::new));
    }

    /** A workspace's sessions, newest first, optionally of one state. */
    List<Session> list(String spaceId, String state, int limit, int offset) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM sync_sessions WHERE space_id = ? AND (?::text IS NULL OR state = ?)"
                        + " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                Session::of,
                spaceId,
                state,
                state,
                limit,
                offset);
    }

    /** How many active sessions {@code principalId} has, in any workspace. */
    long activeOf(String principalId) {
        return sql.count("SELECT count(*) FROM sync_sessions WHERE principal_id = ? AND state = 'active'", principalId);
    }

    long count(String spaceId, String state) {
        return sql.count(
                "SELECT count(*) FROM sync_sessions WHERE space_id = ? AND (?::text IS NULL OR state = ?)",
                spaceId,
                state,
                state);
    }

    /** Every active or stopped session of a repository (to end when the repository is deleted). */
    List<String> openOfRepository(String repoId) {
        return sql.list(
                "SELECT id FROM sync_sessions WHERE repo_id = ? AND state IN ('active', 'stopped')",
                rs -> rs.getString(1),
                repoId);
    }
}
