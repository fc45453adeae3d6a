package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the agent-task routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class AgentTaskJson {

    private AgentTaskJson() {}

    /**
     * A create (title required) or a PATCH (any of the fields; {@code null} clears description, due_at and thread_id).
     * status: todo, in_progress, done, cancelled; priority: low, normal, high, urgent; due_at: RFC 3339.
     */
    record Input(
            String title,
            String description,
            String status,
            String priority,
            @JsonProperty("due_at") String dueAt,
            @JsonProperty("thread_id") String threadId) {}

    record Step(String title, String detail, boolean done) {}

    record Plan(
            List<Step> steps,
            String model,
            @JsonProperty("created_at") Instant createdAt) {}

    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            String title,
            String description,
            String status,
            String priority,
            @JsonProperty("due_at") Instant dueAt,
            @JsonProperty("thread_id") String threadId,
            Plan plan,
            @JsonProperty("run_id") String runId,
            @JsonProperty("last_run_status") String lastRunStatus,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(@JsonProperty("agent_task") View agentTask) {}

    record Page(@JsonProperty("agent_tasks") List<View> agentTasks, long total, int limit, int offset) {}

    record Started(
            @JsonProperty("agent_task") View agentTask,
            @JsonProperty("run_id") String runId) {}

    record Deleted(boolean success) {}
}
