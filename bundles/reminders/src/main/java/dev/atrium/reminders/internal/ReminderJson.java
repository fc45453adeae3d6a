package dev.atrium.reminders.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the reminders routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class ReminderJson {

    private ReminderJson() {}

    /**
     * A create or an update ({@link ReminderInput}): a create needs {@code title} and one of {@code at} or
     * {@code rrule}; an update any of them. {@code at} is an ISO-8601 date-time with an offset or a local one read in
     * {@code time_zone}; {@code starts_at} (with {@code rrule}) a local one; {@code thread_id} and {@code run_input} go
     * together ({@code thread_id: null} removes the run).
     */
    record Input(
            String title,
            String body,
            @JsonProperty("time_zone") String timeZone,
            String at,
            String rrule,
            @JsonProperty("starts_at") String startsAt,
            Boolean enabled,
            @JsonProperty("thread_id") String threadId,
            @JsonProperty("run_input") String runInput) {}

    /** {@link ReminderStore.Reminder#toJson()}: {@code starts_at} is a local date-time in {@code time_zone}. */
    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            String title,
            String body,
            @JsonProperty("time_zone") String timeZone,
            Instant at,
            String rrule,
            @JsonProperty("starts_at") String startsAt,
            boolean enabled,
            @JsonProperty("next_fire_at") Instant nextFireAt,
            @JsonProperty("last_fired_at") Instant lastFiredAt,
            @JsonProperty("fire_count") int fireCount,
            @JsonProperty("last_outcome") String lastOutcome,
            @JsonProperty("thread_id") String threadId,
            @JsonProperty("run_input") String runInput,
            @JsonProperty("last_run_id") String lastRunId,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(View reminder) {}

    record Page(List<View> reminders, long total, int limit, int offset) {}

    /** A manual firing: the reminder, the notification's id and the run's id or why it did not start (each nullable). */
    record Triggered(
            View reminder,
            @JsonProperty("notification_id") String notificationId,
            @JsonProperty("run_id") String runId,
            @JsonProperty("run_error") String runError) {}

    record Deleted(boolean success) {}
}
