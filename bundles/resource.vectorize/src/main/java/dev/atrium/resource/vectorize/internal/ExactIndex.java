package dev.atrium.resource.vectorize.internal;

import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * index {@code exact}: vectors in PostgreSQL as little-endian float32 bytes, every query a full scan of the resource's
 * rows (narrowed by the metadata filter through jsonb containment on a GIN index) scored in Java with a top-k heap.
 * Exact by construction; linear in the number of vectors, so bounded by {@code maxExactVectors}.
 */
final class ExactIndex {

    /** Thrown inside a transaction to roll it back with a client-facing error. */
    private static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient ResourceException error;

        Refused(ResourceException error) {
            super(error.getMessage());
            this.error = error;
        }
    }

    private final Sql sql;

    ExactIndex(Sql sql) {
        this.sql = sql;
    }

    void upsert(String resourceId, List<Vector> vectors, long maxVectors) throws ResourceException {
        try {
            sql.tx(c -> {
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO resource_vectorize_vectors (resource_id, id, dims, vec, metadata, updated_at)"
                                + " VALUES (?, ?, ?, ?, ?::jsonb, now()) ON CONFLICT (resource_id, id) DO UPDATE SET dims = EXCLUDED.dims, vec = EXCLUDED.vec,"
                                + " metadata = EXCLUDED.metadata, updated_at = now()")) {
                    for (Vector v : vectors) {
                        ps.setString(1, resourceId);
                        ps.setString(2, v.id());
                        ps.setInt(3, v.values().length);
                        ps.setBytes(4, Vectors.toBytes(v.values()));
                        try {
                            ps.setString(5, Vectors.metadataJson(v.metadata()));
                        } catch (ResourceException e) {
                            throw new Refused(e);
                        }
                        ps.addBatch();
                    }
                    ps.executeBatch();
                }
                long count = Sql.count(
                        c, "SELECT count(*) FROM resource_vectorize_vectors WHERE resource_id = ?", resourceId);
                if (count > maxVectors) {
                    throw new Refused(new ResourceException(
                            ResourceException.Kind.TOO_LARGE,
                            "an index with index 'exact' holds at most " + maxVectors
                                    + " vectors; this upsert would make it " + count
                                    + " (nothing was stored); create one with index 'hnsw' for more"));
                }
                return null;
            });
        } catch (Refused e) {
            throw e.error;
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the vector store failed; try again", e);
        }
    }

    int delete(String resourceId, List<String> ids) throws ResourceException {
        try {
            return sql.update(
                    "DELETE FROM resource_vectorize_vectors WHERE resource_id = ? AND id = ANY (?)",
                    resourceId,
                    ids.toArray(new String[0]));
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the vector store failed; try again", e);
        }
    }

    void drop(String resourceId) throws ResourceException {
        try {
            sql.update("DELETE FROM resource_vectorize_vectors WHERE resource_id = ?", resourceId);
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the vector store failed; try again", e);
        }
    }

    long count(String resourceId) {
        return sql.count("SELECT count(*) FROM resource_vectorize_vectors WHERE resource_id = ?", resourceId);
    }

    List<Match> query(String resourceId, Metric metric, float[] query, int topK, Map<String, Object> filter)
            throws ResourceException {
        double queryNorm = Vectors.norm(query);
        String filterJson = filter.isEmpty() ? null : Vectors.metadataJson(filter);
        record Scored(String id, double score, String metadata) {}
        PriorityQueue<Scored> best = new PriorityQueue<>(Comparator.comparingDouble(Scored::score));
        try {
            sql.run(c -> {
                boolean auto = c.getAutoCommit();
                c.setAutoCommit(false); // PostgreSQL streams with a cursor only inside a transaction
                try (PreparedStatement ps = c.prepareStatement(
                        "SELECT id, vec, metadata::text FROM resource_vectorize_vectors WHERE resource_id = ?"
                                + (filterJson == null ? "" : " AND metadata @> ?::jsonb"))) {
                    ps.setFetchSize(2000);
                    ps.setString(1, resourceId);
                    if (filterJson != null) {
                        ps.setString(2, filterJson);
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            float[] stored = Vectors.fromBytes(rs.getBytes(2));
                            if (stored.length != query.length) {
                                continue;
                            }
                            double score = metric.score(query, queryNorm, stored);
                            if (best.size() < topK) {
                                best.add(new Scored(rs.getString(1), score, rs.getString(3)));
                            } else if (score > best.peek().score()) {
                                best.poll();
                                best.add(new Scored(rs.getString(1), score, rs.getString(3)));
                            }
                        }
                    }
                } finally {
                    end(c, auto);
                }
                return null;
            });
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the vector store failed; try again", e);
        }
        List<Match> out = new ArrayList<>(best.size());
        while (!best.isEmpty()) {
            Scored s = best.poll();
            out.add(0, new Match(s.id(), s.score(), Vectors.parseMetadata(s.metadata())));
        }
        return out;
    }

    private static void end(Connection c, boolean auto) throws java.sql.SQLException {
        c.rollback();
        c.setAutoCommit(auto);
    }
}
