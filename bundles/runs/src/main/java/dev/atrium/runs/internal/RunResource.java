package dev.atrium.runs.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.runs.internal.RunStore.Artifact;
import dev.atrium.runs.internal.RunStore.Event;
import dev.atrium.runs.internal.RunStore.Run;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/runs/:id}: detail, cancel, events, replay and artifacts. Every route proves the run's workspace. The
 * event streams ({@code sse}, {@code ws}) are {@link RunStreams}.
 */
@Component(service = RunResource.class)
@KernelResource
@Path("/api/runs/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RunResource {

    private final RunAccess access;
    private final RunStore store;

    @Activate
    public RunResource(@Reference RunAccess access, @Reference RunStore store, @Reference EventHub hub) {
        this.access = access;
        this.store = store;
    }

    @GET
    @RequiresScope("runs:read")
    @JsonShape(RunJson.OneRun.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        return Map.of("run", access.owned(Caller.from(sc), id).toJson());
    }

    /** A queued run is cancelled at once; a running one when its loop next looks (between streamed turns and tool calls). */
    @POST
    @Path("cancel")
    @RequiresScope("runs:write")
    @JsonShape(RunJson.OneRun.class)
    public Map<String, Object> cancel(@Context SecurityContext sc, @PathParam("id") String id) {
        Run run = access.owned(Caller.from(sc), id);
        if (run.terminal()) {
            throw ApiException.conflict("the run has already finished (" + run.status() + ")");
        }
        if (!store.finishFrom(run.id(), "queued", "cancelled", null)) {
            store.requestCancel(run.id());
        }
        return Map.of("run", store.get(run.id()).orElseThrow().toJson());
    }

    @GET
    @Path("events")
    @RequiresScope("runs:read")
    @JsonShape(RunJson.Events.class)
    public Map<String, Object> events(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("last_event_id") String lastEventId,
            @QueryParam("limit") String limit) {
        Run run = access.owned(Caller.from(sc), id);
        long after = RunAccess.nonNegative("last_event_id", lastEventId);
        int max = limit == null ? 1000 : PageRequest.of(limit, null).limit();
        List<Event> events = store.events(run.id(), after, max);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("events", events.stream().map(Event::toJson).toList());
        m.put(
                "last_event_id",
                events.isEmpty() ? after : events.get(events.size() - 1).id());
        m.put("status", run.status());
        return m;
    }

    /** Replay from {@code cursor} (an event id; the {@code next_cursor} of the previous page). */
    @GET
    @Path("replay")
    @RequiresScope("runs:read")
    @JsonShape(RunJson.Replay.class)
    public Map<String, Object> replay(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        Run run = access.owned(Caller.from(sc), id);
        long after = RunAccess.nonNegative("cursor", cursor);
        PageRequest page = PageRequest.of(limit, null);
        List<Event> events = store.events(run.id(), after, page.limit() + 1);
        boolean more = events.size() > page.limit();
        List<Event> items = more ? events.subList(0, page.limit()) : events;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("events", items.stream().map(Event::toJson).toList());
        m.put("next_cursor", more ? Long.toString(items.get(items.size() - 1).id()) : null);
        m.put("limit", page.limit());
        return m;
    }

    @GET
    @Path("artifacts")
    @RequiresScope("runs:read")
    @JsonShape(RunJson.Artifacts.class)
    public Map<String, Object> artifacts(@Context SecurityContext sc, @PathParam("id") String id) {
        Run run = access.owned(Caller.from(sc), id);
        return Map.of(
                "artifacts",
                store.artifacts(run.id()).stream().map(a -> a.toJson(false)).toList());
    }

    @POST
    @Path("artifacts")
    @RequiresScope("runs:write")
    @JsonShape(RunJson.OneArtifact.class)
    public Response addArtifact(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(RunJson.ArtifactInput.class) JsonNode body) {
        NulText.reject(body);
        Run run = access.owned(Caller.from(sc), id);
        JsonBody b = JsonBody.of(body);
        String name = b.text("name", 1, 200);
        String type = b.optionalText("content_type", 1, 200).orElse("text/plain");
        String content = b.string("content").orElseThrow(() -> ApiException.badRequest("content is required"));
        if (content.length() > 512 * 1024) {
            throw ApiException.badRequest("content must be at most 524288 characters");
        }
        Artifact a = store.addArtifact(run.id(), name, type, content)
                .orElseThrow(() -> ApiException.conflict("the run has already finished ("
                        + store.get(run.id()).map(Run::status).orElse("gone") + "): artifacts are added "
                        + "while it is queued or running"));
        store.append(run.id(), "artifact.created", Map.of("artifact_id", a.id(), "name", a.name()));
        return Response.status(201).entity(Map.of("artifact", a.toJson(true))).build();
    }
}
