package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Event;
import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.kernel.api.Sql;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jobs no server will end: the heartbeat of the jobs running here, and the sweep that fails those whose server's
 * lock is gone ({@link InstanceLiveness}) or whose heartbeat is {@link #STALE_SECONDS} old.
 */
final class StaleJobs {

    private static final Logger LOG = LoggerFactory.getLogger(StaleJobs.class);
    static final int STALE_SECONDS = 30;

    private final Sql sql;
    private final RunEvents events;
    private final InstanceLiveness liveness;
    private final String instanceId;
    /** The jobs running on this server now (a live view). */
    private final Set<String> running;

    StaleJobs(Sql sql, RunEvents events, InstanceLiveness liveness, String instanceId, Set<String> running) {
        this.sql = sql;
        this.events = events;
        this.liveness = liveness;
        this.instanceId = instanceId;
        this.running = running;
    }

    void heartbeat() {
        liveness.hold();
        if (running.isEmpty()) {
            return;
        }
        try {
            // the jobs running here now, not every row naming this instance: a job whose end could not be recorded
            // stops beating and the stale sweep ends it
            sql.update(
                    "UPDATE action_jobs SET heartbeat_at = now() WHERE id IN (SELECT id FROM action_jobs"
                            + " WHERE id = ANY(?::text[]) AND status = 'in_progress' FOR UPDATE SKIP LOCKED)",
                    "{" + String.join(",", running) + "}");
        } catch (RuntimeException e) {
            LOG.debug("the jobs' heartbeat was not written: {}", e.toString());
        }
    }

    /**
     * Jobs whose server stopped without ending them end failed, saying so: at once when that server's lock is gone, else
     * once their heartbeat is {@link #STALE_SECONDS} old.
     */
    void sweep() {
        List<String[]> candidates = sql.list(
                "SELECT id, coalesce(instance_id, ''), heartbeat_at < now() - make_interval(secs => ?)"
                        + " FROM action_jobs WHERE status = 'in_progress'",
                rs -> new String[] {rs.getString(1), rs.getString(2), String.valueOf(rs.getBoolean(3))},
                STALE_SECONDS);
        java.util.Map<String, Boolean> deadInstances = new java.util.HashMap<>();
        for (String[] c : candidates) {
            boolean mine = c[1].equals(instanceId);
            if (mine && running.contains(c[0])) {
                continue;
            }
            boolean stale = Boolean.parseBoolean(c[2])
                    || (!mine && !c[1].isEmpty() && deadInstances.computeIfAbsent(c[1], liveness::dead));
            if (!stale) {
                continue;
            }
            List<Event> out = sql.tx(tx -> {
                ActionStore.lockRunOf(tx, c[0]);
                Optional<Job> j = ActionStore.job(tx, c[0]);
                if (j.isEmpty() || !j.get().status().equals("in_progress")) {
                    return List.<Event>of();
                }
                return Runs.endJob(tx, j.get(), "failure", "the server running this job stopped before it ended");
            });
            events.committed(out);
        }
    }
}
