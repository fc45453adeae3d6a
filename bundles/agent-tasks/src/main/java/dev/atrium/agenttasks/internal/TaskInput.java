package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.agenttasks.internal.AgentTaskStore.Changes;
import dev.atrium.agenttasks.internal.AgentTaskStore.Fields;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/** A create's or a PATCH's body, read and bounded; every refusal is a 400 naming the field. */
final class TaskInput {

    static final int MAX_TITLE = 200;
    static final int MAX_DESCRIPTION = 10_000;
    static final int MAX_ID = 200;

    private TaskInput() {}

    record Read(Fields fields, Changes changes) {}

    static Read read(JsonNode node, boolean create) {
        JsonBody body = JsonBody.of(node);
        boolean title = present(node, "title");
        if (create && !body.has("title")) {
            throw ApiException.badRequest("title is required");
        }
        if (title && !body.has("title")) {
            throw ApiException.badRequest("title must not be null");
        }
        String t = title ? body.text("title", 1, MAX_TITLE) : null;
        String description = body.optionalText("description", 0, MAX_DESCRIPTION)
                .filter(d -> !d.isEmpty())
                .orElse(null);
        String status = body.oneOf("status", AgentTaskStore.STATUSES).orElse(null);
        if (present(node, "status") && status == null) {
            throw ApiException.badRequest("status must not be null");
        }
        String priority = body.oneOf("priority", AgentTaskStore.PRIORITIES).orElse(null);
        if (present(node, "priority") && priority == null) {
            throw ApiException.badRequest("priority must not be null");
        }
        Instant due = body.string("due_at").map(TaskInput::instant).orElse(null);
        String thread = body.optionalText("thread_id", 1, MAX_ID).orElse(null);
        Changes changes = new Changes(
                title,
                present(node, "description"),
                status != null,
                priority != null,
                present(node, "due_at"),
                present(node, "thread_id"));
        if (!create && !changes.any()) {
            throw ApiException.badRequest(
                    "nothing to change: give title, description, status, priority, due_at or thread_id");
        }
        return new Read(new Fields(t, description, status, priority, due, thread), changes);
    }

    /** An RFC 3339 date-time with an offset ({@code 2026-12-24T18:00:00Z}, {@code …+01:00}). */
    static Instant instant(String text) {
        try {
            return OffsetDateTime.parse(text.trim()).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest(
                    "due_at must be an RFC 3339 date-time with an offset, e.g. 2026-12-24T18:00:00Z");
        }
    }

    private static boolean present(JsonNode node, String field) {
        return node.has(field);
    }
}
