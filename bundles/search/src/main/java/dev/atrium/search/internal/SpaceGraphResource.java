package dev.atrium.search.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.search.api.IndexSource.Item;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * {@code GET /api/spaces/:spaceId/graph/neighbors?kind=&id=}: the items linked to an item, each with its edge:
 * {@code parent} (a message's thread), {@code child} (a thread's messages), {@code links_to} (a markdown link
 * {@code [text](path)} or {@code [[name]]} in its text naming another item's title or path), {@code linked_from} (the
 * reverse), and {@code similar} (its nearest vectors, with the similarity). Only items of the workspace, as their
 * sources have them now.
 */
@Component(service = SpaceGraphResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/graph")
@Produces(MediaType.APPLICATION_JSON)
public class SpaceGraphResource {

    /**
     * A Markdown link's target, or a {@code [[wiki link]]}'s. Each part is bounded, holds no {@code [} and is never given
     * back (possessive): unbounded, each {@code [} of a text without {@code ]} was tried against the whole rest of it,
     * and a 256 KiB file of {@code [} took tens of seconds of a request thread.
     */
    static final Pattern LINK =
            Pattern.compile("\\[[^\\[\\]]{0,500}+\\]\\(([^)\\s]{1,500}+)\\)|\\[\\[([^\\[\\]]{1,500}+)\\]\\]");

    private static final Pattern KIND = Pattern.compile("[a-z_]{1,32}");

    private final OwnerScope ownerScope;
    private final SearchIndex index;
    private final HybridSearch search;

    @Activate
    public SpaceGraphResource(
            @Reference OwnerScope ownerScope, @Reference SearchIndex index, @Reference HybridSearch search) {
        this.ownerScope = ownerScope;
        this.index = index;
        this.search = search;
    }

    @GET
    @Path("neighbors")
    @RequiresScope("threads:read")
    @JsonShape(SearchJson.Neighbors.class)
    public Map<String, Object> neighbors(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("kind") String kind,
            @QueryParam("id") String id,
            @QueryParam("limit") String limit) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (kind == null || !KIND.matcher(kind).matches()) {
            throw ApiException.badRequest("kind is required: memory, message, thread, file, …");
        }
        if (id == null || id.isBlank() || id.length() > 200) {
            throw ApiException.badRequest("id is required (at most 200 characters)");
        }
        int n = SpaceSearchResource.limit(limit, 10);
        String self = kind + ":" + id;
        Item item = search.resolve(space.id(), List.of(self)).get(self);
        if (item == null) {
            throw ApiException.notFound("no " + kind + " " + id + " in this workspace");
        }
        record Edge(String key, String edge, Double score) {}
        List<Edge> edges = new ArrayList<>();
        if (item.parentId() != null && item.parentId().contains(":")) {
            edges.add(new Edge(item.parentId(), "parent", null));
        }
        for (String child : index.sql()
                .list(
                        "SELECT kind || ':' || item_id FROM search_items WHERE space_id = ? AND parent_id = ?"
                                + " ORDER BY changed_at LIMIT ?",
                        rs -> rs.getString(1),
                        space.id(),
                        self,
                        n)) {
            edges.add(new Edge(child, "child", null));
        }
        List<String> targets = new ArrayList<>();
        // the text as indexed (a file's source answers its path only)
        String body = index.sql()
                .one(
                        "SELECT body FROM search_items WHERE space_id = ? AND kind = ? AND item_id = ?",
                        rs -> rs.getString(1),
                        space.id(),
                        kind,
                        id)
                .orElse(item.text() == null ? "" : item.text());
        Matcher m = LINK.matcher(body);
        while (m.find() && targets.size() < 50) {
            String t = m.group(1) != null ? m.group(1) : m.group(2);
            targets.add(t.strip().replaceAll("^\\./|^/", ""));
        }
        if (!targets.isEmpty()) {
            for (String target : index.sql()
                    .list(
                            "SELECT kind || ':' || item_id FROM search_items WHERE space_id = ? AND title = ANY (?)"
                                    + " LIMIT ?",
                            rs -> rs.getString(1),
                            space.id(),
                            targets.toArray(String[]::new),
                            n)) {
                edges.add(new Edge(target, "links_to", null));
            }
        }
        if (item.title() != null && !item.title().isBlank()) {
            String title = item.title();
            for (String from : index.sql()
                    .list(
                            "SELECT kind || ':' || item_id FROM search_items WHERE space_id = ?"
                                    + " AND (strpos(body, '](' || ? || ')') > 0 OR strpos(body, '[[' || ? || ']]') > 0)"
                                    + " LIMIT ?",
                            rs -> rs.getString(1),
                            space.id(),
                            title,
                            title,
                            n)) {
                edges.add(new Edge(from, "linked_from", null));
            }
        }
        try {
            for (SpaceIndexes.Hit h : search.similarTo(space.id(), kind, id, n)) {
                edges.add(new Edge(h.key(), "similar", Math.round(h.similarity() * 1e4) / 1e4));
            }
        } catch (IOException e) {
            // the vector part is left out; the links stand on their own
        }
        Map<String, Item> items = search.resolve(
                space.id(),
                edges.stream()
                        .map(Edge::key)
                        .filter(k -> !k.equals(self))
                        .distinct()
                        .toList());
        List<Map<String, Object>> out = new ArrayList<>();
        for (Edge e : edges) {
            Item other = items.get(e.key());
            if (other == null || e.key().equals(self)) {
                continue;
            }
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("kind", HybridSearch.kind(e.key()));
            one.put("id", other.id());
            one.put("title", other.title());
            one.put("edge", e.edge());
            one.put("score", e.score());
            out.add(one);
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("item", Map.of("kind", kind, "id", id));
        answer.put("neighbors", out);
        return answer;
    }
}
