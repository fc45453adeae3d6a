package dev.atrium.reminders.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.NulText;
import dev.atrium.reminders.internal.ReminderStore.Reminder;
import dev.atrium.reminders.internal.ReminderStore.RunRequest;
import dev.atrium.reminders.internal.ReminderStore.Schedule;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;

/**
 * A reminder's fields from a request body, checked before anything changes: {@code title} (1-200), {@code body}
 * (at most 4,000, null clears it), {@code time_zone} (an IANA name, default UTC), and either {@code at} (one-off: an
 * ISO-8601 date-time with an offset, or a local one read in the time zone; in the future) or {@code rrule} (see
 * {@link Recurrence}) with {@code starts_at} (a local date-time in the time zone, default now), and {@code enabled}.
 * {@code thread_id} with {@code run_input} (1-100,000) asks for a run on that thread each time it fires.
 */
record ReminderInput(String title, String body, Schedule schedule, boolean enabled, RunRequest run) {

    static final int MAX_TITLE = 200;
    static final int MAX_BODY = 4_000;
    static final int MAX_RUN_INPUT = 100_000;
    private static final Set<String> FIELDS =
            Set.of("title", "body", "time_zone", "at", "rrule", "starts_at", "enabled", "thread_id", "run_input");

    /** A new reminder. */
    static ReminderInput create(JsonNode node, Instant now) {
        JsonBody body = checked(node);
        String title = body.text("title", 1, MAX_TITLE);
        String text =
                body.optionalText("body", 0, MAX_BODY).filter(s -> !s.isEmpty()).orElse(null);
        ZoneId zone = zone(body).orElse(ZoneId.of("UTC"));
        if (!body.has("at") && !body.has("rrule")) {
            throw ApiException.badRequest("a reminder needs at (a one-off time) or rrule (a recurrence)");
        }
        Schedule schedule = schedule(body, zone, null, now);
        return new ReminderInput(title, text, schedule, body.bool("enabled").orElse(true), run(node, body, null));
    }

    /** {@code current} with what the body changes; a body that changes nothing is 400. */
    static ReminderInput patch(JsonNode node, Reminder current, Instant now) {
        JsonBody body = checked(node);
        if (!node.fieldNames().hasNext()) {
            throw ApiException.badRequest(
                    "the body changes nothing: give title, body, time_zone, at, rrule, starts_at, enabled, thread_id or run_input");
        }
        String title = body.has("title") ? body.text("title", 1, MAX_TITLE) : current.title();
        if (node.has("title") && node.get("title").isNull()) {
            throw ApiException.badRequest("title must not be null");
        }
        String text = node.has("body")
                ? body.optionalText("body", 0, MAX_BODY)
                        .filter(s -> !s.isEmpty())
                        .orElse(null)
                : current.body();
        ZoneId zone = zone(body).orElse(current.schedule().zone());
        Schedule schedule;
        if (body.has("at") || body.has("rrule") || body.has("starts_at") || body.has("time_zone")) {
            schedule = schedule(body, zone, current.schedule(), now);
        } else {
            schedule = current.schedule();
        }
        if (node.has("enabled") && node.get("enabled").isNull()) {
            throw ApiException.badRequest("enabled must be a boolean");
        }
        return new ReminderInput(
                title, text, schedule, body.bool("enabled").orElse(current.enabled()), run(node, body, current.run()));
    }

    /**
     * The run to start: {@code thread_id} and {@code run_input} go together; on a PATCH either may change alone, and
     * {@code thread_id: null} removes the run.
     */
    private static RunRequest run(JsonNode node, JsonBody body, RunRequest current) {
        if (node.has("thread_id") && node.get("thread_id").isNull()) {
            if (body.has("run_input")) {
                throw ApiException.badRequest("run_input goes with a thread_id");
            }
            return null;
        }
        String thread =
                body.has("thread_id") ? body.text("thread_id", 1, 100) : current == null ? null : current.threadId();
        String input = body.has("run_input")
                ? body.text("run_input", 1, MAX_RUN_INPUT)
                : current == null ? null : current.input();
        if (node.has("run_input") && node.get("run_input").isNull()) {
            throw ApiException.badRequest("run_input must not be null (remove the run with thread_id: null)");
        }
        if ((thread == null) != (input == null)) {
            throw ApiException.badRequest(
                    "thread_id and run_input go together: the run is run_input on thread thread_id");
        }
        return thread == null ? null : new RunRequest(thread, input);
    }

    private static JsonBody checked(JsonNode node) {
        JsonBody body = JsonBody.of(node);
        NulText.reject(node);
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw ApiException.badRequest(
                        "unknown field " + f + " (fields: " + String.join(", ", new java.util.TreeSet<>(FIELDS)) + ")");
            }
        }
        return body;
    }

    private static Optional<ZoneId> zone(JsonBody body) {
        return body.string("time_zone").map(z -> {
            try {
                if (z.length() > 64 || (!z.contains("/") && !z.equals("UTC"))) {
                    throw new DateTimeException(z);
                }
                return ZoneId.of(z);
            } catch (DateTimeException e) {
                throw ApiException.badRequest("time_zone must be an IANA time zone name such as Europe/Paris or UTC");
            }
        });
    }

    /**
     * The schedule the body gives: {@code at} or {@code rrule} (both is 400); with neither (a PATCH changing only the
     * time zone or the start) the current kind is kept, read in the new zone.
     */
    private static Schedule schedule(JsonBody body, ZoneId zone, Schedule current, Instant now) {
        if (body.has("at") && body.has("rrule")) {
            throw ApiException.badRequest("give at (a one-off time) or rrule (a recurrence), not both");
        }
        boolean once = body.has("at") || (!body.has("rrule") && current != null && current.fireAt() != null);
        if (once) {
            if (body.has("starts_at")) {
                throw ApiException.badRequest("starts_at goes with rrule; a one-off reminder has at");
            }
            Instant at = body.has("at") ? at(body.requiredString("at"), zone) : current.fireAt();
            if (body.has("at") && !at.isAfter(now)) {
                throw ApiException.badRequest("at must be in the future");
            }
            return new Schedule(zone, at, null, null);
        }
        String rule = body.has("rrule") ? body.requiredString("rrule") : current.rrule();
        Recurrence recurrence = Recurrence.parse(rule, zone);
        LocalDateTime start = body.has("starts_at")
                ? local(body.requiredString("starts_at"))
                : current != null && current.startsAt() != null
                        ? current.startsAt()
                        : LocalDateTime.ofInstant(now, zone).truncatedTo(ChronoUnit.SECONDS);
        if (start.getYear() < 1970 || start.getYear() > 9999) {
            throw ApiException.badRequest("starts_at is out of range");
        }
        return new Schedule(zone, null, recurrence.text(), start);
    }

    private static Instant at(String value, ZoneId zone) {
        try {
            return OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeException withoutOffset) {
            try {
                Instant i = LocalDateTime.parse(value).atZone(zone).toInstant();
                if (i.isAfter(Instant.parse("9999-12-31T00:00:00Z"))) {
                    throw ApiException.badRequest("at is out of range");
                }
                return i;
            } catch (DateTimeException e) {
                throw ApiException.badRequest(
                        "at must be an ISO-8601 date-time such as 2026-12-01T09:00:00Z or 2026-12-01T09:00 (in time_zone)");
            }
        }
    }

    private static LocalDateTime local(String value) {
        try {
            return LocalDateTime.parse(value).truncatedTo(ChronoUnit.SECONDS);
        } catch (DateTimeException e) {
            throw ApiException.badRequest(
                    "starts_at must be a local ISO-8601 date-time such as 2026-12-01T09:00 (read in time_zone)");
        }
    }
}
