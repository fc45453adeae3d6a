package dev.atrium.store.inventory.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.store.ap.api.ActivityMedia;
import dev.atrium.store.ap.api.CollectionPaging;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;

/** How Model A's documents are written: media types, JSON-LD contexts, collections and pages. */
final class Docs {

    private Docs() {}

    /**
     * The JSON-LD context of every document: ActivityStreams, the security vocabulary, and Model A's terms defined inline
     * on {@code <base>/ns/ext#} (so a JSON-LD processor reads {@code Store}, {@code Repository}, {@code Push},
     * {@code cloneUri}… without fetching anything).
     */
    static List<Object> context(String base) {
        Map<String, Object> terms = new LinkedHashMap<>();
        terms.put("ext", base + "/ns/ext#");
        terms.putAll(ExtNamespace.terms());
        return List.of(ActivityMedia.ACTIVITYSTREAMS_CONTEXT, ActivityMedia.SECURITY_CONTEXT, terms);
    }

    static Response activity(Object body) {
        return json(body, ActivityMedia.ACTIVITY_JSON);
    }

    static Response json(Object body, String type) {
        try {
            return Response.ok(Outboxes.JSON.writeValueAsString(body))
                    .type(type)
                    .build();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static Response redirect(String location) {
        return Response.status(301).location(URI.create(location)).build();
    }

    /** An OrderedCollection holding every item. */
    static Map<String, Object> collection(String base, String id, List<?> items) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(base));
        m.put("id", id);
        m.put("type", "OrderedCollection");
        m.put("totalItems", items.size());
        m.put("orderedItems", items);
        return m;
    }

    /**
     * A paged OrderedCollection: without {@code page} the summary ({@code totalItems}, {@code first}); with it an
     * OrderedCollectionPage of at most {@code limit} (1–100, default 20) items that {@code items.apply(limit, offset)} gives.
     */
    static Map<String, Object> paged(
            String base, String id, long total, String page, String limit, BiFunction<Integer, Long, List<?>> items) {
        CollectionPaging paging = paging(page, limit);
        int size = paging.limit();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("@context", context(base));
        if (paging.page() == null) {
            m.put("id", id);
            m.put("type", "OrderedCollection");
            m.put("totalItems", total);
            m.put("first", id + "?page=1" + (limit == null ? "" : "&limit=" + size));
            return m;
        }
        int number = paging.page();
        String suffix = "&limit=" + size;
        m.put("id", id + "?page=" + number + suffix);
        m.put("type", "OrderedCollectionPage");
        m.put("partOf", id);
        m.put("totalItems", total);
        if (number > 1) {
            m.put("prev", id + "?page=" + (number - 1) + suffix);
        }
        if ((long) number * size < total) {
            m.put("next", id + "?page=" + (number + 1) + suffix);
        }
        m.put("orderedItems", new ArrayList<>(items.apply(size, paging.offset())));
        return m;
    }

    /** The shared paging rules, a client's mistake answered 400. */
    static CollectionPaging paging(String page, String limit) {
        try {
            return CollectionPaging.of(page, limit);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
    }

    /** The request's headers, for verifying its signature. */
    static Map<String, List<String>> headers(HttpHeaders headers) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        headers.getRequestHeaders().forEach((k, v) -> out.put(k, List.copyOf(v)));
        return out;
    }

    /** The request target as it arrived: raw path and query. */
    static String target(UriInfo uri) {
        URI u = uri.getRequestUri();
        return u.getRawPath() + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    }
}
