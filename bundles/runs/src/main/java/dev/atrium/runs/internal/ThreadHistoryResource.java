package dev.atrium.runs.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtensionSelect;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsResource;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.KernelExtensions;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.runs.internal.RunStore.Run;
import dev.atrium.threads.api.Threads;
import dev.atrium.threads.api.Threads.ThreadRef;

/** {@code /api/threads/:threadId/history}: the thread's messages and runs in one timeline, oldest first. */
@Component(service = ThreadHistoryResource.class)
@JaxrsResource
@JaxrsExtensionSelect({ KernelExtensions.SELECT, KernelExtensions.JSON })
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

    @GET
    @RequiresScope("threads:read")
    public Map<String, Object> history(@Context SecurityContext sc, @PathParam("threadId") String threadId) {
        ThreadRef t = threads.require(Caller.from(sc), threadId);
        List<Map<String, Object>> items = new ArrayList<>();
        for (Threads.Message m : threads.messages(t.id())) {
            Map<String, Object> i = new LinkedHashMap<>();
            i.put("kind", "message");
            i.put("id", m.id());
            i.put("role", m.role());
            i.put("content", m.content());
            i.put("run_id", m.runId());
            i.put("created_at", m.createdAt());
            items.add(i);
        }
        for (Run r : store.list(t.id(), false, null, null, 1000)) {
            Map<String, Object> i = new LinkedHashMap<>();
            i.put("kind", "run");
            i.putAll(r.toJson());
            items.add(i);
        }
        items.sort(Comparator.comparing((Map<String, Object> i) -> java.time.Instant.parse((String) i.get("created_at")))
                .thenComparing(i -> "run".equals(i.get("kind")) ? 1 : 0));
        return Map.of("items", items, "thread_id", t.id());
    }
}
