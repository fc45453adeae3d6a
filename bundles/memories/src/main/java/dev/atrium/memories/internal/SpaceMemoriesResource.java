package dev.atrium.memories.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.memories.internal.MemoryStore.Memory;
import java.util.LinkedHashMap;
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

/** {@code /api/spaces/:spaceId/memories}: every route proves ownership through the kernel's {@link OwnerScope} first. */
@Component(service = SpaceMemoriesResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/memories")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceMemoriesResource {

    private final OwnerScope ownerScope;
    private final MemoryStore store;

    @Activate
    public SpaceMemoriesResource(@Reference OwnerScope ownerScope, @Reference MemoryStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(MemoryJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "memories",
                store.list(space.id(), page.limit(), page.offset()).stream()
                        .map(Memory::toJson)
                        .toList(),
                store.count(space.id()));
    }

    @GET
    @Path("search")
    @RequiresScope("threads:read")
    @JsonShape(MemoryJson.Found.class)
    public Map<String, Object> search(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("q") String q,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 1000) {
            throw ApiException.badRequest("q must be at most 1000 characters");
        }
        PageRequest page = PageRequest.of(limit, offset);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                "memories",
                store.search(space.id(), q, page.limit(), page.offset()).stream()
                        .map(Memory::toJson)
                        .toList());
        m.put("query", q);
        m.put("limit", page.limit());
        m.put("offset", page.offset());
        return m;
    }

    @POST
    @RequiresScope("threads:write")
    @JsonShape(MemoryJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(MemoryJson.Content.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        String content = JsonBody.of(body).text("content", 1, MemoryResource.MAX_CONTENT);
        return Response.status(201)
                .entity(Map.of("memory", store.create(space.id(), content).toJson()))
                .build();
    }
}
