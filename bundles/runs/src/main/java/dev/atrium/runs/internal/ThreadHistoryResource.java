package dev.atrium.runs.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.runs.internal.RunStore.Run;
import dev.atrium.threads.api.Threads;
import dev.atrium.threads.api.Threads.ThreadRef;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/threads/:threadId/history}: the thread's messages and runs in one timeline, oldest first, in pages
 * ({@code limit}, {@code cursor} → {@code next_cursor}). At the same instant a message comes before a run. The
 * cursor is the last item's position: its time, its kind and its id.
 */
@Component(service = ThreadHistoryResource.class)
@KernelResource
@Path("/api/threads/{threadId}/history")
@Produces(MediaType.APPLICATION_JSON)
public class ThreadHistoryResource {

    private final Threads threads;
    private final RunStore store;

    @Activate
    public ThreadHistoryResource(@Reference Threads threads, @Reference RunStore store) {
        this.threads = threads;
        this.store = store;
    }

    /** A position in the timeline: items after it come later. {@code run}: whether the item there was a run. */
    record Position(Instant at, boolean run, String id) {
        String cursor() {
            return Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString((at + "|" + (run ? "run" : "message") + "|" + id).getBytes(StandardCharsets.UTF_8));
        }

        static Position parse(String cursor) {
            try {
                String[] p = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split("\\|", 3);
                if (p.length != 3 || !(p[1].equals("run") || p[1].equals("message")) || p[2].isEmpty()) {
                    throw new IllegalArgumentException();
                }
                return new Position(RunAccess.cursorInstant(p[0]), p[1].equals("run"), p[2]);
            } catch (RuntimeException e) {
                throw ApiException.badRequest("cursor is not valid");
            }
        }
    }

    private record Item(Instant at, boolean run, String id, Map<String, Object> json) {}

    @GET
    @RequiresScope("threads:read")
    @JsonShape(RunJson.History.class)
    public Map<String, Object> history(
            @Context SecurityContext sc,
            @PathParam("threadId") String threadId,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        ThreadRef t = threads.require(Caller.from(sc), threadId);
        PageRequest page = PageRequest.of(limit, null);
        Position from = cursor == null || cursor.isBlank() ? null : Position.parse(cursor);
        int n = page.limit() + 1;
        List<Item> messages = new ArrayList<>();
        // messages at the cursor's instant come after it only if the cursor is at a message with a smaller id;
        // runs at that instant come after a message cursor, all of them, and after a run cursor by id
        Instant messagesAfter = from == null ? null : from.run() ? from.at().plusNanos(1_000) : from.at();
        String messageId = from == null || from.run() ? "" : from.id();
        for (Threads.Message m : threads.messagesAfter(t, messagesAfter, messageId, n)) {
            Map<String, Object> i = new LinkedHashMap<>();
            i.put("kind", "message");
            i.put("id", m.id());
            i.put("role", m.role());
            i.put("content", m.content());
            i.put("run_id", m.runId());
            i.put("created_at", m.createdAt());
            messages.add(new Item(Instant.parse(m.createdAt()), false, m.id(), i));
        }
        List<Item> runs = new ArrayList<>();
        for (Run r : store.listAfter(
                t.id(), from == null ? null : from.at(), from == null || !from.run() ? "" : from.id(), n)) {
            Map<String, Object> i = new LinkedHashMap<>();
            i.put("kind", "run");
            i.putAll(r.toJson());
            runs.add(new Item(r.createdAt(), true, r.id(), i));
        }
        List<Item> merged = new ArrayList<>();
        int a = 0;
        int b = 0;
        while (merged.size() < n && (a < messages.size() || b < runs.size())) {
            boolean takeMessage = b >= runs.size()
                    || (a < messages.size()
                            && !messages.get(a).at().isAfter(runs.get(b).at()));
            merged.add(takeMessage ? messages.get(a++) : runs.get(b++));
        }
        boolean more = merged.size() > page.limit();
        List<Item> items = more ? merged.subList(0, page.limit()) : merged;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("thread_id", t.id());
        out.put("items", items.stream().map(Item::json).toList());
        Item last = items.isEmpty() ? null : items.get(items.size() - 1);
        out.put("next_cursor", more ? new Position(last.at(), last.run(), last.id()).cursor() : null);
        out.put("limit", page.limit());
        return out;
    }
}
