package dev.atrium.runs.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.api.Meters;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.runs.internal.RunStore.Run;
import dev.atrium.threads.api.Threads;
import dev.atrium.threads.api.Threads.ThreadRef;
import java.time.Instant;
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
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * {@code /api/threads/:threadId/runs}: list ({@code active_only}, {@code cursor}) and create. A run records the
 * caller's Principal as its requester; with {@code input} the text is first added to the thread as a user message.
 */
@Component(service = ThreadRunsResource.class)
@KernelResource
@Path("/api/threads/{threadId}/runs")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ThreadRunsResource {

    private final Threads threads;
    private final RunStore store;

    /** Asked before a run is queued; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile BillingGate gate;

    @Activate
    public ThreadRunsResource(@Reference Threads threads, @Reference RunStore store) {
        this.threads = threads;
        this.store = store;
    }

    @GET
    @RequiresScope("runs:read")
    @JsonShape(RunJson.RunPage.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("threadId") String threadId,
            @QueryParam("active_only") String activeOnly,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        ThreadRef t = threads.require(Caller.from(sc), threadId);
        PageRequest page = PageRequest.of(limit, null);
        if (activeOnly != null && !activeOnly.equals("true") && !activeOnly.equals("false")) {
            throw ApiException.badRequest("active_only must be true or false");
        }
        Instant before = null;
        String beforeId = null;
        if (cursor != null && !cursor.isBlank()) {
            Object[] c = RunAccess.parseCursor(cursor);
            before = (Instant) c[0];
            beforeId = (String) c[1];
        }
        List<Run> found = store.list(t.id(), "true".equals(activeOnly), before, beforeId, page.limit() + 1);
        boolean more = found.size() > page.limit();
        List<Run> items = more ? found.subList(0, page.limit()) : found;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("runs", items.stream().map(Run::toJson).toList());
        Run last = items.isEmpty() ? null : items.get(items.size() - 1);
        m.put("next_cursor", more ? RunAccess.cursor(last.createdAt(), last.id()) : null);
        m.put("limit", page.limit());
        return m;
    }

    @POST
    @RequiresScope("runs:write")
    @JsonShape(RunJson.OneRun.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("threadId") String threadId,
            @JsonShape(RunJson.RunInput.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        ThreadRef t = threads.require(caller, threadId);
        JsonBody b = JsonBody.of(
                body == null || body.isNull() || body.isMissingNode() ? JsonNodeFactory.instance.objectNode() : body);
        String input = b.optionalText("input", 1, 100_000).orElse(null);
        String provider = b.optionalText("provider", 1, 100).orElse(null);
        String model = b.optionalText("model", 1, 200).orElse(null);
        BillingGate g = gate;
        if (g != null) {
            BillingGate.Decision d = g.check(t.spaceId(), Meters.RUN_TOKENS_IN);
            if (!d.allowed()) {
                throw new ApiException(402, "PAYMENT_REQUIRED", d.reason());
            }
        }
        if (input != null) {
            threads.append(t, "user", input, null);
        }
        Run run = store.create(t.id(), t.spaceId(), caller.principalId(), provider, model);
        return Response.status(201).entity(Map.of("run", run.toJson())).build();
    }
}
