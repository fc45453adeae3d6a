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
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
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
 * {@code /api/spaces/:spaceId/index}: the index's status and its upkeep. {@code vectorize} (embed what has no
 * embedding yet) and {@code rebuild} (write the Lucene index again from PostgreSQL, then vectorize) share one
 * allowance per workspace per interval: past it, 429 {@code RATE_LIMITED} with Retry-After.
 */
@Component(service = SpaceIndexResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/index")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class SpaceIndexResource {

    private final OwnerScope ownerScope;
    private final SearchIndex index;
    private final SearchSettings settings;
    private final RateLimits limits = new RateLimits();

    @Activate
    public SpaceIndexResource(
            @Reference OwnerScope ownerScope, @Reference SearchIndex index, @Reference SearchSettings settings) {
        this.ownerScope = ownerScope;
        this.index = index;
        this.settings = settings;
    }

    @GET
    @Path("status")
    @RequiresScope("threads:read")
    @JsonShape(SearchJson.Status.class)
    public Map<String, Object> status(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        record Row(String kind, long items, long embedded) {}
        List<Row> rows = index.sql()
                .list(
                        "SELECT kind, count(*), count(embedding) FROM search_items WHERE space_id = ? GROUP BY kind"
                                + " ORDER BY kind",
                        rs -> new Row(rs.getString(1), rs.getLong(2), rs.getLong(3)),
                        space.id());
        long items = rows.stream().mapToLong(Row::items).sum();
        long embedded = rows.stream().mapToLong(Row::embedded).sum();
        List<Map<String, Object>> sources = new ArrayList<>();
        for (Row r : rows) {
            sources.add(Map.of("kind", r.kind(), "items", r.items(), "embedded", r.embedded()));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("space_id", space.id());
        m.put("vectors_configured", index.vectorsConfigured());
        m.put("model", index.model());
        m.put("items", items);
        m.put("embedded", embedded);
        m.put("pending", index.vectorsConfigured() ? items - embedded : 0);
        m.put("index_documents", documents(space.id()));
        m.put("index_segments", segments(space.id()));
        m.put("sources", sources);
        m.put("last_error", index.lastError().isEmpty() ? null : index.lastError());
        return m;
    }

    private long documents(String spaceId) {
        try {
            return index.lucene(spaceId).count(spaceId);
        } catch (IOException e) {
            throw ApiException.unavailable("the workspace's vector index cannot be read: " + e.getMessage());
        }
    }

    private long segments(String spaceId) {
        try {
            return index.lucene(spaceId).segments(spaceId);
        } catch (IOException e) {
            throw ApiException.unavailable("the workspace's vector index cannot be read: " + e.getMessage());
        }
    }

    @POST
    @Path("vectorize")
    @RequiresScope("threads:write")
    @JsonShape(SearchJson.Upkeep.class)
    public Response vectorize(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return upkeep(space, false);
    }

    @POST
    @Path("rebuild")
    @RequiresScope("threads:write")
    @JsonShape(SearchJson.Upkeep.class)
    public Response rebuild(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        return upkeep(space, true);
    }

    private Response upkeep(SpaceRef space, boolean rebuild) {
        if (!index.vectorsConfigured()) {
            throw new ApiException(
                    404,
                    "SEARCH_NOT_CONFIGURED",
                    "no embeddings API is configured: set ATRIUM_EMBEDDINGS_BASE_URL (and ATRIUM_EMBEDDINGS_API_KEY)");
        }
        try {
            limits.take(space.id(), settings.indexInterval());
        } catch (RateLimits.Limited limited) {
            return Response.status(429)
                    .type(MediaType.APPLICATION_JSON_TYPE)
                    .header("Retry-After", Long.toString(limited.retryAfterSeconds))
                    .entity(ApiException.body("RATE_LIMITED", limited.getMessage()))
                    .build();
        }
        try {
            if (rebuild) {
                index.rebuild(space.id());
            }
            long embedded = index.embedPending(space.id(), 100_000);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("space_id", space.id());
            m.put("embedded", embedded);
            m.put("index_documents", documents(space.id()));
            return Response.ok(m).build();
        } catch (IOException e) {
            throw new ApiException(502, "EMBEDDINGS_FAILED", "the embeddings API failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted");
        }
    }

    @POST
    @Path("file")
    @RequiresScope("threads:write")
    @JsonShape(SearchJson.FileIndexed.class)
    public Map<String, Object> file(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(SearchJson.FileInput.class) JsonNode body) {
        NulText.reject(body);
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        String path = JsonBody.of(body).text("path", 1, 4096).replaceAll("^/+", "");
        if (index.source("file").isEmpty()) {
            throw ApiException.unavailable("workspace storage is not running, so its files cannot be indexed");
        }
        index.pass(); // reads every source's changes now, this file's among them
        record Indexed(String id, boolean embedded) {}
        Optional<Indexed> found = index.sql()
                .one(
                        "SELECT item_id, embedding IS NOT NULL FROM search_items WHERE space_id = ? AND kind = 'file'"
                                + " AND title = ?",
                        rs -> new Indexed(rs.getString(1), rs.getBoolean(2)),
                        space.id(),
                        path);
        if (found.isEmpty()) {
            throw ApiException.notFound("no text file at " + path + " in this workspace's storage");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", found.get().id());
        m.put("path", path);
        m.put("indexed", true);
        m.put("embedded", found.get().embedded());
        return m;
    }
}
