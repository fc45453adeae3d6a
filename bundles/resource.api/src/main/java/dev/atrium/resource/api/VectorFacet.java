package dev.atrium.resource.api;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A vector index ({@code vectorize}). Its dimension and metric ({@code cosine}, {@code dot}, {@code euclidean}) are in
 * the resource's config; the core checks every vector has that dimension before calling.
 */
@ConsumerType
public interface VectorFacet {

    /** Inserts or replaces vectors by id. */
    void upsert(ResourceContext ctx, List<Vector> vectors) throws ResourceException;

    /** Returns how many of {@code ids} existed. */
    int delete(ResourceContext ctx, List<String> ids) throws ResourceException;

    /**
     * The {@code topK} nearest vectors to {@code query} whose metadata matches every entry of {@code filter}
     * (equality on top-level fields; an empty filter matches all), best first.
     */
    List<Match> query(ResourceContext ctx, float[] query, int topK, Map<String, Object> filter)
            throws ResourceException;

    /** A stored vector with JSON-like metadata. */
    record Vector(String id, float[] values, Map<String, Object> metadata) {}

    /** A query result; a higher score is nearer, whatever the metric. */
    record Match(String id, double score, Map<String, Object> metadata) {}
}
