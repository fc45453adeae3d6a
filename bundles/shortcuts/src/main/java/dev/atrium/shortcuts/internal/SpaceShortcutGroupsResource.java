package dev.atrium.shortcuts.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.shortcuts.internal.ShortcutStore.Group;
import dev.atrium.shortcuts.internal.ShortcutStore.Link;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/spaces/:spaceId/shortcuts/groups}: a workspace's shortcut groups with their items. Every route proves
 * the workspace through the kernel's {@link OwnerScope} first; a group or item is looked up inside that workspace
 * only, so another workspace's is the same 404 as a missing one.
 */
@Component(service = SpaceShortcutGroupsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/shortcuts/groups")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceShortcutGroupsResource {

    static final int MAX_NAME = 100;
    private static final String GROUP_NOT_FOUND = "shortcut group not found";
    private static final String ITEM_NOT_FOUND = "shortcut item not found";

    private final OwnerScope ownerScope;
    private final ShortcutStore store;

    @Activate
    public SpaceShortcutGroupsResource(@Reference OwnerScope ownerScope, @Reference ShortcutStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    private SpaceRef space(SecurityContext sc, String spaceId) {
        return ownerScope.require(Caller.from(sc), spaceId);
    }

    @RequiresScope("account:read")
    @GET
    @JsonShape(ShortcutJson.Groups.class)
    public Map<String, Object> list(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        List<Map<String, Object>> groups = store.groups(space(sc, spaceId).id()).stream()
                .map(Group::toJson)
                .toList();
        return Map.of("groups", groups, "total", groups.size());
    }

    @POST
    @JsonShape(ShortcutJson.OneGroup.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(ShortcutJson.NewGroup.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = space(sc, spaceId);
        JsonBody b = JsonBody.of(body);
        Links.rejectUnknown(body, Set.of("name", "items"));
        String name = b.text("name", 1, MAX_NAME);
        List<Link> items = new ArrayList<>();
        JsonNode itemsNode = body.get("items");
        if (itemsNode != null && !itemsNode.isNull()) {
            if (!itemsNode.isArray() || itemsNode.size() > ShortcutStore.MAX_ITEMS) {
                throw ApiException.badRequest(
                        "items must be an array of at most " + ShortcutStore.MAX_ITEMS + " {title, url, icon}");
            }
            for (JsonNode item : itemsNode) {
                items.add(Links.from(item));
            }
        }
        return Response.status(201)
                .entity(Map.of(
                        "group", store.createGroup(space.id(), name, items).toJson()))
                .build();
    }

    @RequiresScope("account:read")
    @GET
    @Path("{groupId}")
    @JsonShape(ShortcutJson.OneGroup.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("groupId") String groupId) {
        return Map.of(
                "group",
                store.group(space(sc, spaceId).id(), groupId)
                        .orElseThrow(() -> ApiException.notFound(GROUP_NOT_FOUND))
                        .toJson());
    }

    /** {@code name} and/or {@code position} (0-based; the other groups shift). */
    @PATCH
    @Path("{groupId}")
    @JsonShape(ShortcutJson.OneGroup.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("groupId") String groupId,
            @JsonShape(ShortcutJson.GroupChange.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = space(sc, spaceId);
        JsonBody b = JsonBody.of(body);
        Links.rejectUnknown(body, Set.of("name", "position"));
        String name = b.optionalText("name", 1, MAX_NAME).orElse(null);
        Integer position = null;
        JsonNode p = body.get("position");
        if (p != null && !p.isNull()) {
            if (!p.isIntegralNumber() || !p.canConvertToInt() || p.intValue() < 0) {
                throw ApiException.badRequest("position must be a non-negative integer");
            }
            position = p.intValue();
        }
        if (name == null && position == null) {
            throw ApiException.badRequest("send name and/or position");
        }
        return Map.of(
                "group",
                store.updateGroup(space.id(), groupId, name, position)
                        .orElseThrow(() -> ApiException.notFound(GROUP_NOT_FOUND))
                        .toJson());
    }

    @DELETE
    @Path("{groupId}")
    @JsonShape(ShortcutJson.Deleted.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("groupId") String groupId) {
        if (!store.deleteGroup(space(sc, spaceId).id(), groupId)) {
            throw ApiException.notFound(GROUP_NOT_FOUND);
        }
        return Map.of("success", true);
    }

    @POST
    @Path("{groupId}/items")
    @JsonShape(ShortcutJson.OneItem.class)
    public Response addItem(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("groupId") String groupId,
            @JsonShape(ShortcutJson.Link.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = space(sc, spaceId);
        if (store.group(space.id(), groupId).isEmpty()) {
            throw ApiException.notFound(GROUP_NOT_FOUND);
        }
        Link link = Links.from(body);
        return Response.status(201)
                .entity(Map.of(
                        "item",
                        store.addItem(space.id(), groupId, link)
                                .orElseThrow(() -> ApiException.notFound(GROUP_NOT_FOUND))
                                .toJson()))
                .build();
    }

    @DELETE
    @Path("{groupId}/items/{itemId}")
    @JsonShape(ShortcutJson.Deleted.class)
    public Map<String, Object> removeItem(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("groupId") String groupId,
            @PathParam("itemId") String itemId) {
        if (!store.removeItem(space(sc, spaceId).id(), groupId, itemId)) {
            throw ApiException.notFound(ITEM_NOT_FOUND);
        }
        return Map.of("success", true);
    }
}
