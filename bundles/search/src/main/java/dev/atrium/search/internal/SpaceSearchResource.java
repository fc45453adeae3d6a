package dev.atrium.search.internal;

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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
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
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/spaces/:spaceId/search}: the hybrid search and the file-path search. Every route proves the workspace
 * through the kernel's {@link OwnerScope} first.
 */
@Component(service = SpaceSearchResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/search")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceSearchResource {

    static final int MAX_QUERY = 1000;
    static final int MAX_LIMIT = 50;

    private final OwnerScope ownerScope;
    private final HybridSearch search;
    private final SearchIndex index;

    @Activate
    public SpaceSearchResource(
            @Reference OwnerScope ownerScope, @Reference HybridSearch search, @Reference SearchIndex index) {
        this.ownerScope = ownerScope;
        this.search = search;
        this.index = index;
    }

    @POST
    @RequiresScope("threads:read")
    @JsonShape(SearchJson.Answer.class)
    public Map<String, Object> search(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(SearchJson.Query.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        JsonBody b = JsonBody.of(body);
        String query = b.text("query", 1, MAX_QUERY).strip();
        if (query.isEmpty()) {
            throw ApiException.badRequest("query must not be blank");
        }
        int limit = limit(body.get("limit"));
        HybridSearch.Answer a = search.search(space.id(), query, limit);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("query", a.query());
        m.put("mode", a.mode());
        m.put("vector_skipped", a.vectorSkipped());
        List<Map<String, Object>> results = new ArrayList<>();
        for (HybridSearch.Result r : a.results()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("kind", r.kind());
            one.put("id", r.id());
            one.put("parent_id", r.parentId());
            one.put("title", r.title());
            one.put("snippet", r.snippet());
            one.put("score", r.score());
            one.put("keyword_rank", r.keywordRank());
            one.put("similarity", r.similarity());
            results.add(one);
        }
        m.put("results", results);
        m.put("cached", a.cached());
        return m;
    }

    /** A {@code limit} query parameter: absent gives {@code fallback}; else a whole number from 1 to 50. */
    static int limit(String limit, int fallback) {
        if (limit == null) {
            return fallback;
        }
        int n;
        try {
            n = Integer.parseInt(limit);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1 || n > MAX_LIMIT) {
            throw ApiException.badRequest("limit must be a whole number from 1 to " + MAX_LIMIT);
        }
        return n;
    }

    static int limit(JsonNode limit) {
        if (limit == null || limit.isNull()) {
            return 10;
        }
        if (!limit.isIntegralNumber() || limit.asLong() < 1 || limit.asLong() > MAX_LIMIT) {
            throw ApiException.badRequest("limit must be a whole number from 1 to " + MAX_LIMIT);
        }
        return limit.asInt();
    }

    @GET
    @Path("quick")
    @RequiresScope("threads:read")
    @JsonShape(SearchJson.QuickAnswer.class)
    public Map<String, Object> quick(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("q") String q,
            @QueryParam("limit") String limit) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        if (q == null || q.isBlank()) {
            throw ApiException.badRequest("q is required");
        }
        if (q.length() > 500) {
            throw ApiException.badRequest("q must be at most 500 characters");
        }
        int n = limit(limit, 20);
        List<PathMatch.Candidate> files = index.sql()
                .list(
                        "SELECT item_id, title FROM search_items WHERE space_id = ? AND kind = 'file'"
                                + " AND title IS NOT NULL ORDER BY changed_at DESC LIMIT 20000",
                        rs -> new PathMatch.Candidate(rs.getString(1), rs.getString(2)),
                        space.id());
        List<Map<String, Object>> out = new ArrayList<>();
        for (PathMatch.Found f : PathMatch.best(q.strip().toLowerCase(Locale.ROOT), files, n)) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("id", f.candidate().id());
            one.put("path", f.candidate().path());
            one.put("match", f.match());
            one.put("score", f.score());
            out.add(one);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("query", q);
        m.put("files", out);
        return m;
    }
}
