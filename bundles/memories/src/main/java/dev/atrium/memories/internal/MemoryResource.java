package dev.atrium.memories.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.memories.internal.MemoryStore.Memory;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
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
 * {@code /api/memories/:id}: a memory addressed by its own id is resolved to its workspace and proven through the
 * kernel's {@link OwnerScope}, so another Principal's memory is the same 404 as a missing one.
 */
@Component(service = MemoryResource.class)
@KernelResource
@Path("/api/memories/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class MemoryResource {

    static final int MAX_CONTENT = 10_000;
    private static final String NOT_FOUND = "memory not found";

    private final OwnerScope ownerScope;
    private final MemoryStore store;

    @Activate
    public MemoryResource(@Reference OwnerScope ownerScope, @Reference MemoryStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(MemoryJson.One.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        return Map.of("memory", owned(Caller.from(sc), id).toJson());
    }

    @PATCH
    @RequiresScope("threads:write")
    @JsonShape(MemoryJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(MemoryJson.Content.class) JsonNode body) {
        NulText.reject(body);
        Memory memory = owned(Caller.from(sc), id);
        String content = JsonBody.of(body).text("content", 1, MAX_CONTENT);
        return Map.of(
                "memory",
                store.update(memory.id(), content)
                        .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                        .toJson());
    }

    @DELETE
    @RequiresScope("threads:write")
    @JsonShape(MemoryJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!store.delete(owned(Caller.from(sc), id).id())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    private Memory owned(Caller caller, String id) {
        Memory memory = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            ownerScope.require(caller, memory.spaceId());
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return memory;
    }
}
