package dev.atrium.resource.api;

import java.time.Instant;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Append-only data points ({@code analyticsEngine}) and a bounded SQL-like query over them. A data point is never
 * changed after it is written.
 */
@ConsumerType
public interface AnalyticsFacet {

    /** Appends data points. */
    void write(ResourceContext ctx, List<DataPoint> points) throws ResourceException;

    /**
     * Runs a read-only query over the resource's data points; the provider bounds its time and result size.
     *
     * @param query in the provider's documented dialect
     */
    SqlFacet.SqlResult query(ResourceContext ctx, String query) throws ResourceException;

    /**
     * One data point.
     *
     * @param timestamp when it happened (the core fills in now when the client gave none)
     * @param indexes   values it is grouped and sampled by (at most one in most backends)
     * @param blobs     string dimensions
     * @param doubles   numeric measures
     */
    record DataPoint(Instant timestamp, List<String> indexes, List<String> blobs, List<Double> doubles) {}
}
