package dev.atrium.threads.internal;

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
import dev.atrium.threads.internal.ThreadStore.Thread;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
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
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/** {@code /api/spaces/:spaceId/threads}: list (status filter), create, keyword search. */
@Component(service = SpaceThreadsResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/threads")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceThreadsResource {

    static final Set<String> STATUSES = Set.of("active", "archived");
    static final int MAX_TITLE = 200;

    private final OwnerScope ownerScope;
    private final ThreadStore store;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile SemanticThreads semantic;

    @Activate
    public SpaceThreadsResource(@Reference OwnerScope ownerScope, @Reference ThreadStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(ThreadJson.ThreadPage.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("status") String status,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (status != null && !STATUSES.contains(status)) {
            throw ApiException.badRequest("status must be one of active, archived");
        }
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "threads",
                store.list(space.id(), status, page.limit(), page.offset()).stream()
                        .map(Thread::toJson)
                        .toList(),
                store.count(space.id(), status));
    }

    @GET
    @Path("search")
    @RequiresScope("threads:read")
    @JsonShape(ThreadJson.ThreadSearch.class)
    public Map<String, Object> search(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("q") String q,
            @QueryParam("mode") String mode,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        checkQuery(q);
        if (mode != null && !mode.equals("keyword") && !mode.equals("semantic")) {
            throw ApiException.badRequest("mode must be keyword or semantic");
        }
        PageRequest page = PageRequest.of(limit, offset);
        Map<String, Object> m = new LinkedHashMap<>();
        if ("semantic".equals(mode)) {
            m.put("threads", semantic(space.id(), q, page));
        } else {
            m.put(
                    "threads",
                    store.search(space.id(), q, page.limit(), page.offset()).stream()
                            .map(Thread::toJson)
                            .toList());
        }
        m.put("query", q);
        m.put("mode", "semantic".equals(mode) ? "semantic" : "keyword");
        m.put("limit", page.limit());
        m.put("offset", page.offset());
        return m;
    }

    /** How deep semantic search pages: the threads nearest the query, at most this many. */
    static final int MAX_SEMANTIC = 500;

    private List<Map<String, Object>> semantic(String spaceId, String q, PageRequest page) {
        SemanticThreads search = semantic;
        if (search == null) {
            throw new ApiException(
                    404, "SEARCH_NOT_CONFIGURED", "semantic search needs the search capability, which is not running");
        }
        // the nearest threads only: a deep page of "nearest" means nothing, and the count asked of the index (offset +
        // limit, times the hits asked per thread) overflowed an int into a 500
        if ((long) page.offset() + page.limit() > MAX_SEMANTIC) {
            throw ApiException.badRequest("semantic search pages through the " + MAX_SEMANTIC
                    + " nearest threads: offset + limit must be at most " + MAX_SEMANTIC);
        }
        List<String> ids;
        try {
            ids = search.threadIds(spaceId, q, page.offset() + page.limit());
        } catch (IllegalStateException e) {
            throw new ApiException(404, "SEARCH_NOT_CONFIGURED", "semantic search is not available: " + e.getMessage());
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (String id : ids.subList(Math.min(page.offset(), ids.size()), ids.size())) {
            store.get(id).filter(t -> t.spaceId().equals(spaceId)).ifPresent(t -> out.add(t.toJson()));
        }
        return out;
    }

    @POST
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneThread.class)
    public Response create(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(ThreadJson.ThreadInput.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String title = b.text("title", 1, MAX_TITLE);
        String locale = b.optionalText("locale", 1, 35).orElse(null);
        Integer contextWindow = ThreadResource.contextWindow(body);
        return Response.status(201)
                .entity(Map.of(
                        "thread",
                        store.create(space.id(), title, locale, contextWindow).toJson()))
                .build();
    }

    static void checkQuery(String q) {
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 1000) {
            throw ApiException.badRequest("q must be at most 1000 characters");
        }
    }
}
