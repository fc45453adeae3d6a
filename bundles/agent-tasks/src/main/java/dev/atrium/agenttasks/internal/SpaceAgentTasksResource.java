package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import java.util.Map;
import java.util.Set;
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

/** {@code /api/spaces/:spaceId/agent-tasks}: every route proves ownership through the kernel's {@link OwnerScope} first. */
@Component(service = SpaceAgentTasksResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/agent-tasks")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceAgentTasksResource {

    private final OwnerScope ownerScope;
    private final AgentTaskStore store;
    private final TaskThreads threads;

    @Activate
    public SpaceAgentTasksResource(
            @Reference OwnerScope ownerScope, @Reference AgentTaskStore store, @Reference TaskThreads threads) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.threads = threads;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(AgentTaskJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("status") String status,
            @QueryParam("priority") String priority,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        String s = filter("status", status, AgentTaskStore.STATUSES);
        String p = filter("priority", priority, AgentTaskStore.PRIORITIES);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "agent_tasks",
                store.list(space.id(), s, p, page.limit(), page.offset()).stream()
                        .map(store::toJson)
                        .toList(),
                store.count(space.id(), s, p));
    }

    @POST
    @RequiresScope("threads:write")
    @JsonShape(AgentTaskJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(AgentTaskJson.Input.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        SpaceRef space = ownerScope.require(caller, spaceId);
        TaskInput.Read input = TaskInput.read(body, true);
        if (input.fields().threadId() != null) {
            threads.require(caller, space, input.fields().threadId());
        }
        return Response.status(201)
                .entity(Map.of(
                        "agent_task", store.toJson(store.create(space.id(), caller.principalId(), input.fields()))))
                .build();
    }

    private static String filter(String name, String value, Set<String> allowed) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        if (!allowed.contains(value)) {
            throw ApiException.badRequest(name + " must be one of "
                    + String.join(", ", allowed.stream().sorted().toList()));
        }
        return value;
    }
}
