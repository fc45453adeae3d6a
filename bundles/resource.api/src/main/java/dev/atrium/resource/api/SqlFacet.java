package dev.atrium.resource.api;

import java.io.OutputStream;
import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A SQL database ({@code d1}). When {@link ResourceContext#access()} is {@link Access#READ}, the provider must make
 * writes impossible with its database's own mechanisms (a read-only connection, an authorizer), not by reading the
 * SQL text.
 */
@ConsumerType
public interface SqlFacet {

    /** The user tables, by name. */
    List<TableInfo> tables(ResourceContext ctx) throws ResourceException;

    /**
     * A page of a table's rows in its natural order.
     *
     * @throws ResourceException {@link ResourceException.Kind#NOT_FOUND} when there is no such table
     */
    SqlResult tableRows(ResourceContext ctx, String table, int limit, int offset) throws ResourceException;

    /**
     * Runs exactly one statement with positional parameters ({@code ?}). Several statements in one call are
     * {@link ResourceException.Kind#BAD_INPUT}.
     *
     * @param params JSON-like values: String, Long, Double, Boolean or null
     */
    SqlResult query(ResourceContext ctx, String sql, List<Object> params) throws ResourceException;

    /** Writes the whole database as a SQL script (schema and rows) that recreates it. */
    void export(ResourceContext ctx, OutputStream out) throws ResourceException;

    /** A table and how many rows it has (-1 when counting would be too slow). */
    record TableInfo(String name, long rowCount) {}

    /**
     * A statement's result.
     *
     * @param columns     the column names, empty for a statement that returns no rows
     * @param rows        each row's values in column order (String, Long, Double, byte[] or null)
     * @param rowsChanged rows inserted, updated or deleted; 0 for a query
     * @param truncated   whether rows were left out because of the provider's result-size limit
     */
    record SqlResult(List<String> columns, List<List<Object>> rows, long rowsChanged, boolean truncated) {}
}
