package dev.atrium.runs.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/** The JSON the runs routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class RunJson {

    private RunJson() {}

    /** {@link RunStore.Run#toJson()}; {@code last_event_id} is the id of its latest event (0 before the first). */
    record RunView(
            String id,
            @JsonProperty("thread_id") String threadId,
            @JsonProperty("space_id") String spaceId,
            String status,
            String provider,
            String model,
            String error,
            @JsonProperty("last_event_id") long lastEventId,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("started_at") Instant startedAt,
            @JsonProperty("finished_at") Instant finishedAt) {}

    record OneRun(RunView run) {}

    /** A page of the thread's runs, newest first; {@code next_cursor} is null on the last page. */
    record RunPage(
            List<RunView> runs, @JsonProperty("next_cursor") String nextCursor, int limit) {}

    /** A run to start: with {@code input} that text is first added to the thread as a user message. */
    record RunInput(String input, String provider, String model) {}

    /** A run event: its {@code type} says what {@code data} holds. */
    record Event(
            long id,
            @JsonProperty("run_id") String runId,
            String type,
            JsonNode data,
            @JsonProperty("created_at") Instant createdAt) {}

    /** Events after {@code last_event_id} of the query; {@code last_event_id} here is where the next call goes on. */
    record Events(
            List<Event> events,
            @JsonProperty("last_event_id") long lastEventId,
            String status) {}

    record Replay(
            List<Event> events, @JsonProperty("next_cursor") String nextCursor, int limit) {}

    /** An artifact of a run; {@code content} only where a single artifact is answered, {@code size} in characters. */
    record Artifact(
            String id,
            @JsonProperty("run_id") String runId,
            String name,
            @JsonProperty("content_type") String contentType,
            String content,
            long size,
            @JsonProperty("created_at") Instant createdAt) {}

    record Artifacts(List<Artifact> artifacts) {}

    record OneArtifact(Artifact artifact) {}

    /** An artifact to add: {@code name} and {@code content} required, {@code content_type} {@code text/plain} by default. */
    record ArtifactInput(
            String name, @JsonProperty("content_type") String contentType, String content) {}

    /**
     * An item of a thread's history: a message ({@code kind} {@code message}: {@code role}, {@code content},
     * {@code run_id}) or a run ({@code kind} {@code run}: the fields of a run).
     */
    record HistoryItem(
            String kind,
            String id,
            String role,
            String content,
            @JsonProperty("run_id") String runId,
            @JsonProperty("thread_id") String threadId,
            @JsonProperty("space_id") String spaceId,
            String status,
            String provider,
            String model,
            String error,
            @JsonProperty("last_event_id") Long lastEventId,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("started_at") Instant startedAt,
            @JsonProperty("finished_at") Instant finishedAt) {}

    /** A page of the history, oldest first; {@code next_cursor} is null on the last page. */
    record History(
            @JsonProperty("thread_id") String threadId,
            List<HistoryItem> items,
            @JsonProperty("next_cursor") String nextCursor,
            int limit) {}
}
