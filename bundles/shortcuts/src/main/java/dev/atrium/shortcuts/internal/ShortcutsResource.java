package dev.atrium.shortcuts.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.shortcuts.internal.ShortcutStore.Shortcut;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/shortcuts}: the caller's own shortcuts, in their order. They belong to the Principal the kernel
 * authenticated; another Principal's shortcut is the same 404 as a missing one. Account data: no scope is declared,
 * so a limited token may read them but not change them.
 */
@Component(service = ShortcutsResource.class)
@KernelResource
@Path("/api/shortcuts")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ShortcutsResource {

    private static final String NOT_FOUND = "shortcut not found";

    private final ShortcutStore store;

    @Activate
    public ShortcutsResource(@Reference ShortcutStore store) {
        this.store = store;
    }

    @RequiresScope("account:read")
    @GET
    @JsonShape(ShortcutJson.Shortcuts.class)
    public Map<String, Object> list(@Context SecurityContext sc) {
        List<Map<String, Object>> all = store.shortcuts(Caller.from(sc).principalId()).stream()
                .map(Shortcut::toJson)
                .toList();
        return Map.of("shortcuts", all, "total", all.size());
    }

    @POST
    @JsonShape(ShortcutJson.OneShortcut.class)
    public Response create(@Context SecurityContext sc, @JsonShape(ShortcutJson.Link.class) JsonNode body) {
        NulText.reject(body);
        Shortcut s = store.create(Caller.from(sc).principalId(), Links.from(body));
        return Response.status(201).entity(Map.of("shortcut", s.toJson())).build();
    }

    @PUT
    @Path("{id}")
    @JsonShape(ShortcutJson.OneShortcut.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ShortcutJson.Link.class) JsonNode body) {
        NulText.reject(body);
        String principal = Caller.from(sc).principalId();
        if (store.shortcut(principal, id).isEmpty()) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of(
                "shortcut",
                store.update(principal, id, Links.from(body))
                        .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                        .toJson());
    }

    @DELETE
    @Path("{id}")
    @JsonShape(ShortcutJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!store.delete(Caller.from(sc).principalId(), id)) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    /** {@code {"ids": [...]}}: every one of the caller's shortcuts, once, in the new order; all or nothing. */
    @POST
    @Path("reorder")
    @JsonShape(ShortcutJson.Shortcuts.class)
    public Map<String, Object> reorder(
            @Context SecurityContext sc, @JsonShape(ShortcutJson.Reorder.class) JsonNode body) {
        NulText.reject(body);
        dev.atrium.kernel.api.JsonBody.of(body);
        Links.rejectUnknown(body, java.util.Set.of("ids"));
        JsonNode ids = body.get("ids");
        if (ids == null || !ids.isArray() || ids.size() > ShortcutStore.MAX_SHORTCUTS) {
            throw ApiException.badRequest("ids must be an array of your shortcut ids, in the new order");
        }
        List<String> order = new ArrayList<>();
        for (JsonNode id : ids) {
            if (!id.isTextual() || id.textValue().isEmpty() || id.textValue().length() > 64) {
                throw ApiException.badRequest("ids must be an array of shortcut ids (strings)");
            }
            order.add(id.textValue());
        }
        List<Map<String, Object>> all = store
                .reorder(Caller.from(sc).principalId(), order)
                .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                .stream()
                .map(Shortcut::toJson)
                .toList();
        return Map.of("shortcuts", all, "total", all.size());
    }
}
