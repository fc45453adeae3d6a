package dev.atrium.threads.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Threads in a workspace archive: {@code threads/threads.jsonl} (one thread a line, {@code key} its id in the archive)
 * and {@code threads/messages.jsonl} (one message a line, {@code thread} the key of its thread, in the order written).
 * Shares are left out: their links belong to the server that made them. A message's run is left out too (runs are
 * another part, with their own ids, which finds a thread's new id by its key).
 */
@Component(service = WorkspaceArchivePart.class)
public class ThreadsArchivePart implements WorkspaceArchivePart {

    static final String THREADS = "threads.jsonl";
    static final String MESSAGES = "messages.jsonl";
    private static final int MAX_ROLE = 32;

    private final ThreadStore store;

    @Activate
    public ThreadsArchivePart(@Reference ThreadStore store) {
        this.store = store;
    }

    @Override
    public String name() {
        return "threads";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines threads = out.lines(THREADS);
        Lines[] messages = {null};
        return store.archive(
                space.id(),
                t -> {
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("key", t.id());
                    line.put("title", t.title());
                    line.put("locale", t.locale());
                    line.put("status", t.status());
                    line.put("context_window", t.contextWindow());
                    line.put("created_at", t.createdAt().toString());
                    line.put("updated_at", t.updatedAt().toString());
                    threads.add(line);
                },
                count -> messages[0] = out.lines(MESSAGES),
                m -> {
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("thread", m.message().threadId());
                    line.put("role", m.message().role());
                    line.put("content", m.message().content());
                    line.put("created_at", m.message().createdAt());
                    messages[0].add(line);
                });
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        Map<String, String> threadIds = new HashMap<>();
        in.lines(THREADS, line -> {
            JsonBody b = JsonBody.of(line);
            String key = b.text("key", 1, 200);
            if (threadIds.containsKey(key)) {
                throw ApiException.badRequest("threads: the key " + key + " is given twice");
            }
            Instant created = instant(b, "created_at");
            ThreadStore.Thread t = store.restore(
                    space.id(),
                    b.text("title", 1, SpaceThreadsResource.MAX_TITLE),
                    b.optionalText("locale", 1, 64).orElse(null),
                    b.oneOf("status", SpaceThreadsResource.STATUSES).orElse("active"),
                    contextWindow(line.get("context_window")),
                    created,
                    b.has("updated_at") ? instant(b, "updated_at") : created);
            threadIds.put(key, t.id());
            in.remember(key, t.id());
        });
        in.lines(MESSAGES, line -> {
            JsonBody b = JsonBody.of(line);
            String thread = threadIds.get(b.requiredString("thread"));
            if (thread == null) {
                throw ApiException.badRequest("threads: a message names a thread the archive does not have");
            }
            String content = b.requiredString("content");
            store.restoreMessage(thread, b.text("role", 1, MAX_ROLE), content, instant(b, "created_at"));
        });
        return threadIds.size();
    }

    @Override
    public void discard(SpaceRef space) {
        store.deleteAll(space.id());
    }

    private static Integer contextWindow(JsonNode v) {
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber() || v.intValue() < 1) {
            throw ApiException.badRequest("threads: context_window must be a positive integer");
        }
        return v.intValue();
    }

    private static Instant instant(JsonBody b, String field) {
        try {
            return Instant.parse(b.requiredString(field));
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("threads: " + field + " must be an ISO-8601 instant");
        }
    }
}
