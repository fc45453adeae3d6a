package dev.atrium.reminders.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The reminders table, which this bundle owns. It knows workspaces only by id; ownership is the kernel's. */
@Component(service = ReminderStore.class)
public class ReminderStore {

    static final int MAX_PER_SPACE = 500;
    private static final String COLUMNS =
            "id, space_id, title, body, time_zone, fire_at, rrule, starts_at, enabled, next_fire_at, "
                    + "last_fired_at, fire_count, last_outcome, thread_id, run_input, last_run_id, created_at, updated_at";

    private final Sql sql;

    @Activate
    public ReminderStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    /** What a reminder is scheduled by: a one-off {@code fireAt}, or {@code rrule} from {@code startsAt}, in {@code zone}. */
    record Schedule(ZoneId zone, Instant fireAt, String rrule, LocalDateTime startsAt) {
        /** The first firing strictly after {@code after}; null when there is none. */
        Instant nextAfter(Instant after) {
            if (fireAt != null) {
                return fireAt.isAfter(after) ? fireAt : null;
            }
            return Recurrence.parse(rrule, zone).nextAfter(startsAt, zone, after);
        }
    }

    /** The run a reminder starts when it fires: {@code input} as a user message on {@code threadId}. */
    record RunRequest(String threadId, String input) {}

    public record Reminder(
            String id,
            String spaceId,
            String title,
            String body,
            Schedule schedule,
            boolean enabled,
            Instant nextFireAt,
            Instant lastFiredAt,
            int fireCount,
            String lastOutcome,
            RunRequest run,
            String lastRunId,
            Instant createdAt,
            Instant updatedAt) {
        static Reminder of(ResultSet rs) throws SQLException {
            LocalDateTime starts = rs.getObject("starts_at", LocalDateTime.class);
            return new Reminder(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("title"),
                    rs.getString("body"),
                    new Schedule(
                            ZoneId.of(rs.getString("time_zone")),
                            Sql.instant(rs, "fire_at"),
                            rs.getString("rrule"),
                            starts),
                    rs.getBoolean("enabled"),
                    Sql.instant(rs, "next_fire_at"),
                    Sql.instant(rs, "last_fired_at"),
                    rs.getInt("fire_count"),
                    rs.getString("last_outcome"),
                    rs.getString("thread_id") == null
                            ? null
                            : new RunRequest(rs.getString("thread_id"), rs.getString("run_input")),
                    rs.getString("last_run_id"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("title", title);
            m.put("body", body);
            m.put("time_zone", schedule.zone().getId());
            m.put("at", text(schedule.fireAt()));
            m.put("rrule", schedule.rrule());
            m.put(
                    "starts_at",
                    schedule.startsAt() == null ? null : schedule.startsAt().toString());
            m.put("enabled", enabled);
            m.put("next_fire_at", text(nextFireAt));
            m.put("last_fired_at", text(lastFiredAt));
            m.put("fire_count", fireCount);
            m.put("last_outcome", lastOutcome);
            m.put("thread_id", run == null ? null : run.threadId());
            m.put("run_input", run == null ? null : run.input());
            m.put("last_run_id", lastRunId);
            m.put("created_at", text(createdAt));
            m.put("updated_at", text(updatedAt));
            return m;
        }

        private static String text(Instant i) {
            return i == null ? null : i.toString();
        }
    }

    /** A reminder claimed as due, with what the claim decided. */
    record Claimed(Reminder reminder, boolean fire) {}

    /** The next firing of an enabled schedule after now, or null (disabled, or a one-off whose time has passed). */
    static Instant next(Schedule schedule, boolean enabled, Instant now) {
        return enabled ? schedule.nextAfter(now) : null;
    }

    public Reminder create(String spaceId, String title, String body, Schedule s, boolean enabled, RunRequest run) {
        return sql.tx(c -> {
            // one workspace's creations queue on its lock so the cap holds under concurrent posts
            Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('reminders:' || ?))", spaceId);
            if (Sql.count(c, "SELECT count(*) FROM reminders WHERE space_id = ?", spaceId) >= MAX_PER_SPACE) {
                throw dev.atrium.kernel.api.ApiException.conflict(
                        "a workspace has at most " + MAX_PER_SPACE + " reminders");
            }
            return Sql.one(
                            c,
                            "INSERT INTO reminders (id, space_id, title, body, time_zone, fire_at, rrule, starts_at, enabled, next_fire_at, "
                                    + "thread_id, run_input) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING "
                                    + COLUMNS,
                            Reminder::of,
                            Ids.id("rem"),
                            spaceId,
                            title,
                            body,
                            s.zone().getId(),
                            ts(s.fireAt()),
                            s.rrule(),
                            s.startsAt(),
                            enabled,
                            ts(next(s, enabled, Instant.now())),
                            run == null ? null : run.threadId(),
                            run == null ? null : run.input())
                    .orElseThrow();
        });
    }

    public Optional<Reminder> get(String id) {
        return sql.one("SELECT " + COLUMNS + " FROM reminders WHERE id = ?", Reminder::of, id);
    }

    public List<Reminder> list(String spaceId, int limit, int offset) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM reminders WHERE space_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
                Reminder::of,
                spaceId,
                limit,
                offset);
    }

    public long count(String spaceId) {
        return sql.count("SELECT count(*) FROM reminders WHERE space_id = ?", spaceId);
    }

    /** Replaces what may change; the next firing is computed again from now. */
    public Optional<Reminder> update(
            String id, String title, String body, Schedule s, boolean enabled, RunRequest run) {
        return sql.one(
                "UPDATE reminders SET title = ?, body = ?, time_zone = ?, fire_at = ?, rrule = ?, starts_at = ?, enabled = ?, "
                        + "next_fire_at = ?, thread_id = ?, run_input = ?, updated_at = now() WHERE id = ? RETURNING "
                        + COLUMNS,
                Reminder::of,
                title,
                body,
                s.zone().getId(),
                ts(s.fireAt()),
                s.rrule(),
                s.startsAt(),
                enabled,
                ts(next(s, enabled, Instant.now())),
                run == null ? null : run.threadId(),
                run == null ? null : run.input(),
                id);
    }

    public boolean delete(String id) {
        return sql.update("DELETE FROM reminders WHERE id = ?", id) == 1;
    }

    /** Removes every reminder of a workspace (an import that failed after this part). */
    public int deleteAll(String spaceId) {
        return sql.update("DELETE FROM reminders WHERE space_id = ?", spaceId);
    }

    /** Records the run the last firing started. */
    public Optional<Reminder> recordRun(String id, String runId) {
        return sql.one(
                "UPDATE reminders SET last_run_id = ? WHERE id = ? RETURNING " + COLUMNS, Reminder::of, runId, id);
    }

    /** Records a manual firing (the schedule is left as it is). */
    public Optional<Reminder> recordTrigger(String id) {
        return sql.one(
                "UPDATE reminders SET last_fired_at = now(), fire_count = fire_count + 1, last_outcome = 'fired' WHERE id = ? RETURNING "
                        + COLUMNS,
                Reminder::of,
                id);
    }

    /**
     * Claims up to {@code limit} due reminders in one transaction: rows another instance holds are skipped ({@code FOR
     * UPDATE SKIP LOCKED}), and each claimed row's next firing moves past now before the commit, so however many
     * occurrences passed while no instance ran, a reminder fires once, and no two instances fire the same occurrence.
     * {@code decide} says whether a reminder may fire (its workspace's owner is active); one that may not is skipped
     * for this occurrence.
     */
    public List<Claimed> claimDue(int limit, java.util.function.Predicate<Reminder> decide) {
        return sql.tx(c -> {
            List<Reminder> due = Sql.list(
                    c,
                    "SELECT " + COLUMNS + " FROM reminders WHERE next_fire_at <= now() AND enabled "
                            + "ORDER BY next_fire_at LIMIT ? FOR UPDATE SKIP LOCKED",
                    Reminder::of,
                    limit);
            Instant now = dbNow(c);
            List<Claimed> out = new java.util.ArrayList<>();
            for (Reminder r : due) {
                boolean fire = decide.test(r);
                Instant next;
                try {
                    // a one-off fires once, whatever its time says; a recurrence goes on after now
                    next = r.schedule().fireAt() != null
                            ? null
                            : r.schedule().nextAfter(now.isAfter(r.nextFireAt()) ? now : r.nextFireAt());
                } catch (RuntimeException e) {
                    next = null; // a rule this version no longer reads: it stops rather than fires in a loop
                }
                Sql.update(
                        c,
                        "UPDATE reminders SET next_fire_at = ?, last_fired_at = CASE WHEN ? THEN now() ELSE last_fired_at END, "
                                + "fire_count = fire_count + CASE WHEN ? THEN 1 ELSE 0 END, last_outcome = ? WHERE id = ?",
                        ts(next),
                        fire,
                        fire,
                        fire ? "fired" : "skipped_inactive",
                        r.id());
                out.add(new Claimed(r, fire));
            }
            return out;
        });
    }

    private static Instant dbNow(Connection c) throws SQLException {
        return Sql.one(c, "SELECT now() AS now", rs -> Sql.instant(rs, "now")).orElseThrow();
    }

    private static Timestamp ts(Instant i) {
        return i == null ? null : Timestamp.from(i);
    }
}
