package dev.atrium.resource.analytics.internal;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.AnalyticsFacet;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import dev.atrium.resource.api.SqlFacet.SqlResult;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * {@code analyticsEngine} resources on the server's PostgreSQL (backend {@code postgres}): data points shaped like
 * Cloudflare's Analytics Engine (a timestamp, at most one index, up to 20 blobs and 20 doubles), appended and never
 * changed, and a bounded query in the JSON dialect of {@link AnalyticsQuery} — never SQL from the client — with a row
 * limit, a time-range limit and a statement timeout.
 */
@Component(service = ResourceProvider.class, configurationPid = "dev.atrium.resource.analytics")
@ResourceProviderType(type = "analyticsEngine", backend = "postgres")
@Designate(ocd = AnalyticsProvider.Config.class)
public class AnalyticsProvider implements ResourceProvider, AnalyticsFacet {

    @ObjectClassDefinition(name = "Atrium analyticsEngine resources")
    public @interface Config {
        @AttributeDefinition(description = "Most data points in one write")
        int maxBatch() default 250;

        @AttributeDefinition(description = "Most rows a query returns (its limit is at most this)")
        int maxRows() default 10_000;

        @AttributeDefinition(description = "Longest time range (to - from) of a query, in days")
        int maxRangeDays() default 92;

        @AttributeDefinition(description = "A query running longer than this many milliseconds is cancelled (400)")
        int queryTimeoutMillis() default 5_000;
    }

    static final int MAX_INDEX_BYTES = 96;
    static final int MAX_BLOB_BYTES = 16_384;
    static final int MAX_VALUES = 20;

    private final Config config;
    private final Sql sql;
    private final DataSource dataSource;

    @Activate
    public AnalyticsProvider(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            BundleContext context,
            Config config) {
        migrations.apply(context.getBundle());
        this.config = config;
        this.sql = new Sql(dataSource);
        this.dataSource = dataSource;
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        run(() -> sql.update("DELETE FROM resource_analytics_points WHERE resource_id = ?", ctx.resourceId()));
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of(
                "backend",
                "postgres",
                "dialect",
                "json (see docs/decisions.md: analyticsEngine query)",
                "fields",
                "timestamp, index1, blob1..blob20, double1..double20");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            sql.count("SELECT 1");
            return Health.ok();
        } catch (RuntimeException e) {
            return Health.failing("PostgreSQL does not answer");
        }
    }

    @Override
    public void write(ResourceContext ctx, List<DataPoint> points) throws ResourceException {
        if (points == null || points.isEmpty()) {
            throw ResourceException.badInput("a write needs at least one data point");
        }
        if (points.size() > config.maxBatch()) {
            throw new ResourceException(
                    ResourceException.Kind.TOO_LARGE, "at most " + config.maxBatch() + " data points per write");
        }
        ctx.usage().admit("writes");
        for (DataPoint p : points) {
            check(p);
        }
        Instant now = Instant.now();
        run(() -> sql.tx(c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO resource_analytics_points (resource_id, ts, index1, blobs, doubles) VALUES (?, ?, ?, ?, ?)")) {
                for (DataPoint p : points) {
                    ps.setString(1, ctx.resourceId());
                    ps.setTimestamp(2, Timestamp.from(p.timestamp() == null ? now : p.timestamp()));
                    ps.setString(
                            3,
                            p.indexes() == null || p.indexes().isEmpty()
                                    ? ""
                                    : p.indexes().get(0));
                    ps.setArray(
                            4, c.createArrayOf("text", (p.blobs() == null ? List.<String>of() : p.blobs()).toArray()));
                    ps.setArray(
                            5,
                            c.createArrayOf(
                                    "float8", (p.doubles() == null ? List.<Double>of() : p.doubles()).toArray()));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            return null;
        }));
        ctx.usage().record("writes", points.size());
    }

    private static void check(DataPoint p) throws ResourceException {
        if (p == null) {
            throw ResourceException.badInput("a data point is an object");
        }
        if (p.indexes() != null) {
            if (p.indexes().size() > 1) {
                throw ResourceException.badInput("a data point has at most one index");
            }
            if (!p.indexes().isEmpty()
                    && (p.indexes().get(0) == null || bytes(p.indexes().get(0)) > MAX_INDEX_BYTES)) {
                throw ResourceException.badInput("an index is a string of at most " + MAX_INDEX_BYTES + " bytes");
            }
        }
        if (p.blobs() != null) {
            if (p.blobs().size() > MAX_VALUES) {
                throw ResourceException.badInput("a data point has at most " + MAX_VALUES + " blobs");
            }
            long total = 0;
            for (String b : p.blobs()) {
                total += b == null ? 0 : bytes(b);
                if (b != null && b.indexOf('\0') >= 0) {
                    throw ResourceException.badInput("blobs must not contain NUL characters");
                }
            }
            if (total > MAX_BLOB_BYTES) {
                throw new ResourceException(
                        ResourceException.Kind.TOO_LARGE,
                        "a data point's blobs are at most " + MAX_BLOB_BYTES + " bytes in all");
            }
        }
        if (p.doubles() != null) {
            if (p.doubles().size() > MAX_VALUES) {
                throw ResourceException.badInput("a data point has at most " + MAX_VALUES + " doubles");
            }
            for (Double d : p.doubles()) {
                if (d != null && !Double.isFinite(d)) {
                    throw ResourceException.badInput("doubles must be finite numbers");
                }
            }
        }
        if (p.indexes() != null && !p.indexes().isEmpty() && p.indexes().get(0).indexOf('\0') >= 0) {
            throw ResourceException.badInput("an index must not contain NUL characters");
        }
    }

    private static int bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    public SqlResult query(ResourceContext ctx, String query) throws ResourceException {
        AnalyticsQuery.Plan plan =
                AnalyticsQuery.parse(query, ctx.resourceId(), Instant.now(), config.maxRows(), config.maxRangeDays());
        List<List<Object>> rows;
        // its own connection, not Sql.tx: a cancelled statement (57014) is the client's query being too heavy, a 4xx
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (var st = c.createStatement()) {
                    st.execute("SET LOCAL statement_timeout = " + Math.max(1, config.queryTimeoutMillis()));
                }
                rows = rows(c, plan);
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            if ("57014".equals(e.getSQLState())) {
                throw ResourceException.badInput("the query ran longer than " + config.queryTimeoutMillis()
                        + " ms and was cancelled; narrow the time range or the grouping");
            }
            RuntimeException t = Sql.translate(e);
            throw t instanceof Sql.DatabaseException
                    ? ResourceException.unavailable("the analytics store failed; try again", e)
                    : translate(t);
        }
        ctx.usage().record("queries", 1);
        ctx.usage().record("rows_read", rows.size());
        boolean truncated = rows.size() > plan.limit();
        return new SqlResult(
                plan.columns().stream().map(AnalyticsQuery.Column::name).toList(),
                truncated ? List.copyOf(rows.subList(0, plan.limit())) : rows,
                0,
                truncated);
    }

    private static List<List<Object>> rows(Connection c, AnalyticsQuery.Plan plan) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(plan.sql())) {
            for (int i = 0; i < plan.params().size(); i++) {
                ps.setObject(i + 1, plan.params().get(i));
            }
            List<List<Object>> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    List<Object> row = new ArrayList<>(plan.columns().size());
                    for (int i = 0; i < plan.columns().size(); i++) {
                        row.add(
                                switch (plan.columns().get(i).kind()) {
                                    case COUNT -> rs.getLong(i + 1);
                                    case NUMBER -> {
                                        double d = rs.getDouble(i + 1);
                                        yield rs.wasNull() ? null : d;
                                    }
                                    case TIME -> {
                                        Timestamp t = rs.getTimestamp(i + 1);
                                        yield t == null ? null : t.toInstant().toString();
                                    }
                                    default -> rs.getString(i + 1);
                                });
                    }
                    rows.add(row);
                }
            }
            return rows;
        }
    }

    private static ResourceException translate(RuntimeException e) {
        if (e instanceof dev.atrium.kernel.api.ApiException a && a.status() == 400) {
            return ResourceException.badInput(a.getMessage());
        }
        return ResourceException.unavailable("the analytics store failed; try again", e);
    }

    private static <T> T run(java.util.function.Supplier<T> call) throws ResourceException {
        try {
            return call.get();
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the analytics store failed; try again", e);
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }
}
