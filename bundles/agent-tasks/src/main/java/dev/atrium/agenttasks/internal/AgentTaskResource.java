package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.agenttasks.internal.AgentTaskStore.Task;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/agent-tasks/:id}: a task addressed by its own id is resolved to its workspace and proven through the
 * kernel's {@link OwnerScope}, so another Principal's task is the same 404 as a missing one.
 */
@Component(service = AgentTaskResource.class)
@KernelResource
@Path("/api/agent-tasks/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class AgentTaskResource {

    static final String NOT_FOUND = "agent task not found";

    private final OwnerScope ownerScope;
    private final AgentTaskStore store;
    private final TaskThreads threads;
    private final TaskPlanner planner;
    private final TaskRuns runs;

    @Activate
    public AgentTaskResource(
            @Reference OwnerScope ownerScope,
            @Reference AgentTaskStore store,
            @Reference TaskThreads threads,
            @Reference TaskPlanner planner,
            @Reference TaskRuns runs) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.threads = threads;
        this.planner = planner;
        this.runs = runs;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(AgentTaskJson.One.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        return one(owned(Caller.from(sc), id).task());
    }

    @PATCH
    @RequiresScope("threads:write")
    @JsonShape(AgentTaskJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(AgentTaskJson.Input.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        Owned owned = owned(caller, id);
        TaskInput.Read input = TaskInput.read(body, false);
        if (input.fields().threadId() != null) {
            threads.require(caller, owned.space(), input.fields().threadId());
        }
        return one(store.update(owned.task().id(), input.fields(), input.changes())
                .orElseThrow(() -> ApiException.notFound(NOT_FOUND)));
    }

    @DELETE
    @RequiresScope("threads:write")
    @JsonShape(AgentTaskJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!store.delete(owned(Caller.from(sc), id).task().id())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    /** Asks the workspace's model for the task's steps and stores them; a failure leaves the task as it was. */
    @POST
    @Path("plan")
    @RequiresScope("runs:write")
    @JsonShape(AgentTaskJson.One.class)
    public Map<String, Object> plan(@Context SecurityContext sc, @PathParam("id") String id) {
        Caller caller = Caller.from(sc);
        Owned owned = owned(caller, id);
        String plan = planner.plan(caller, owned.space(), owned.task());
        return one(store.storePlan(owned.task().id(), plan).orElseThrow(() -> ApiException.notFound(NOT_FOUND)));
    }

    /** Starts a run for the task on its thread (an extension of the spec: docs/api/agent-tasks.md). */
    @POST
    @Path("run")
    @RequiresScope("runs:write")
    @JsonShape(AgentTaskJson.Started.class)
    public Map<String, Object> run(@Context SecurityContext sc, @PathParam("id") String id) {
        Caller caller = Caller.from(sc);
        Task started = runs.start(owned(caller, id).task(), caller.principalId());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("agent_task", store.toJson(started));
        m.put("run_id", started.runId());
        return m;
    }

    private Map<String, Object> one(Task task) {
        return Map.of("agent_task", store.toJson(task));
    }

    private record Owned(Task task, SpaceRef space) {}

    private Owned owned(Caller caller, String id) {
        Task task = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            return new Owned(task, ownerScope.require(caller, task.spaceId()));
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
    }
}
