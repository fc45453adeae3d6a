package dev.atrium.resource.analytics.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.resource.api.AnalyticsFacet.DataPoint;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.SqlFacet.SqlResult;
import dev.atrium.resource.api.TestResourceContext;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

/** The analyticsEngine provider on a fresh database of the PostgreSQL at 127.0.0.1:5432 (ATRIUM_TEST_PG overrides). */
class AnalyticsProviderTest {

    static final String HOST = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
    static final String DATABASE =
            "atrium_ae_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    static PGSimpleDataSource dataSource;
    static AnalyticsProvider provider;
    static final Instant T0 = Instant.parse("2026-11-01T10:00:00Z");

    @BeforeAll
    static void createDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres");
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        }
        dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://" + HOST + "/" + DATABASE + "?user=postgres");
        provider = provider(Map.of());
    }

    static AnalyticsProvider provider(Map<String, Object> overrides) {
        SchemaMigrations migrations = bundle -> {
            try (InputStream in = AnalyticsProvider.class.getResourceAsStream("/db/migration/V1__analytics.sql");
                    Connection c = dataSource.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(new String(in.readAllBytes(), StandardCharsets.UTF_8)
                        .replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ")
                        .replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS "));
                return 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        BundleContext context = (BundleContext) Proxy.newProxyInstance(
                AnalyticsProviderTest.class.getClassLoader(),
                new Class<?>[] {BundleContext.class},
                (proxy, method, args) -> null);
        AnalyticsProvider.Config config = (AnalyticsProvider.Config) Proxy.newProxyInstance(
                AnalyticsProviderTest.class.getClassLoader(),
                new Class<?>[] {AnalyticsProvider.Config.class},
                (proxy, method, args) -> overrides.getOrDefault(method.getName(), method.getDefaultValue()));
        return new AnalyticsProvider(dataSource, migrations, context, config);
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres");
                Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
        }
    }

    /** 30 requests over three hours: path /a, /b, /c in turn, method GET except every fifth, latency i ms, index customer-(i%2). */
    static TestResourceContext seeded() throws ResourceException {
        TestResourceContext ctx = new TestResourceContext(dataSource, null, Map.of());
        List<DataPoint> points = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            points.add(new DataPoint(
                    T0.plusSeconds(i * 360L),
                    List.of("customer-" + (i % 2)),
                    List.of(List.of("/a", "/b", "/c").get(i % 3), i % 5 == 0 ? "POST" : "GET"),
                    List.of((double) i, 1.0)));
        }
        provider.write(ctx, points);
        return ctx;
    }

    static final String RANGE = "\"from\":\"2026-11-01T00:00:00Z\",\"to\":\"2026-11-02T00:00:00Z\"";

    @Test
    void aggregatesGroupedByABlobAreOrderedAndCountedExactly() throws Exception {
        TestResourceContext ctx = seeded();
        SqlResult r = provider.query(
                ctx,
                "{\"select\":[{\"field\":\"blob1\",\"as\":\"path\"},{\"fn\":\"count\",\"as\":\"n\"},"
                        + "{\"fn\":\"sum\",\"field\":\"double1\",\"as\":\"total\"},{\"fn\":\"max\",\"field\":\"double1\"}],"
                        + RANGE
                        + ",\"order_by\":[{\"by\":\"total\",\"desc\":true}]}");
        assertEquals(List.of("path", "n", "total", "max_double1"), r.columns());
        // /c: 2+5+...+29 = 155, /b: 1+4+...+28 = 145, /a: 0+3+...+27 = 135
        assertEquals(
                List.of(
                        List.of("/c", 10L, 155.0, 29.0),
                        List.of("/b", 10L, 145.0, 28.0),
                        List.of("/a", 10L, 135.0, 27.0)),
                r.rows());
        assertFalse(r.truncated());
        assertEquals(30, ctx.used("writes"));
    }

    @Test
    void whereTimeRangeBucketsAndLimitBoundTheAnswer() throws Exception {
        TestResourceContext ctx = seeded();
        SqlResult posts = provider.query(
                ctx,
                "{\"select\":[{\"fn\":\"count\"}]," + RANGE
                        + ",\"where\":[{\"field\":\"blob2\",\"op\":\"=\",\"value\":\"POST\"},{\"field\":\"index1\",\"op\":\"in\",\"value\":[\"customer-0\"]}]}");
        assertEquals(List.of(List.of(3L)), posts.rows(), "i = 0, 10, 20");
        SqlResult hours = provider.query(
                ctx,
                "{\"select\":[{\"field\":\"timestamp\",\"bucket\":\"hour\"},{\"fn\":\"count\",\"as\":\"n\"}]," + RANGE
                        + ",\"order_by\":[{\"by\":\"hour\"}]}");
        assertEquals(
                List.of(
                        List.of("2026-11-01T10:00:00Z", 10L),
                        List.of("2026-11-01T11:00:00Z", 10L),
                        List.of("2026-11-01T12:00:00Z", 10L)),
                hours.rows());
        SqlResult window = provider.query(
                ctx,
                "{\"select\":[{\"fn\":\"count\"}],\"from\":\"2026-11-01T11:00:00Z\",\"to\":\"2026-11-01T11:30:00Z\"}");
        assertEquals(List.of(List.of(5L)), window.rows());
        SqlResult raw = provider.query(
                ctx, "{\"select\":[{\"field\":\"timestamp\"},{\"field\":\"double1\"}]," + RANGE + ",\"limit\":4}");
        assertEquals(4, raw.rows().size());
        assertTrue(raw.truncated());
        assertEquals(List.of("2026-11-01T12:54:00Z", 29.0), raw.rows().get(0), "raw rows newest first");
        SqlResult high = provider.query(
                ctx,
                "{\"select\":[{\"fn\":\"avg\",\"field\":\"double1\",\"as\":\"a\"}]," + RANGE
                        + ",\"where\":[{\"field\":\"double1\",\"op\":\">=\",\"value\":20}]}");
        assertEquals(List.of(List.of(24.5)), high.rows());
    }

    @Test
    void aResourceSeesOnlyItsOwnPointsAndLosesThemWhenDeprovisioned() throws Exception {
        TestResourceContext a = seeded();
        TestResourceContext b = new TestResourceContext(dataSource, null, Map.of());
        String count = "{\"select\":[{\"fn\":\"count\"}]," + RANGE + "}";
        assertEquals(List.of(List.of(0L)), provider.query(b, count).rows());
        provider.write(b, List.of(new DataPoint(null, null, null, null)));
        assertEquals(
                List.of(List.of(1L)),
                provider.query(b, "{\"select\":[{\"fn\":\"count\"}]}").rows(),
                "no timestamp means now");
        provider.deprovision(a);
        assertEquals(List.of(List.of(0L)), provider.query(a, count).rows());
    }

    @Test
    void queriesOutsideTheDialectOrItsBoundsAreRefusedWithTheReason() throws Exception {
        TestResourceContext ctx = seeded();
        assertBad(ctx, "SELECT * FROM resource_analytics_points", "not JSON");
        assertBad(ctx, "[]", "JSON object");
        assertBad(ctx, "{\"select\":[{\"field\":\"blob1; DROP TABLE x\"}]}", "unknown field");
        assertBad(ctx, "{\"select\":[{\"field\":\"blob21\"}]}", "unknown field");
        assertBad(ctx, "{\"select\":[{\"field\":\"blob1\",\"as\":\"x\\\" FROM y--\"}]}", "\"as\"");
        assertBad(ctx, "{\"select\":[{\"fn\":\"sum\",\"field\":\"blob1\"}]}", "double field");
        assertBad(ctx, "{\"select\":[{\"fn\":\"pg_sleep\"}]}", "unknown aggregate");
        assertBad(ctx, "{\"select\":[{\"fn\":\"count\"}],\"having\":1}", "unknown key 'having'");
        assertBad(
                ctx,
                "{\"select\":[{\"fn\":\"count\"}],\"from\":\"2025-01-01T00:00:00Z\",\"to\":\"2026-01-01T00:00:00Z\"}",
                "at most 92 days");
        assertBad(ctx, "{\"select\":[{\"fn\":\"count\"}],\"from\":\"yesterday\"}", "ISO-8601");
        assertBad(ctx, "{\"select\":[{\"fn\":\"count\"}],\"limit\":10001}", "limit");
        assertBad(
                ctx,
                "{\"select\":[{\"field\":\"blob1\"},{\"fn\":\"count\"}],\"group_by\":[]}",
                "neither an aggregate nor in group_by");
        assertBad(
                ctx,
                "{\"select\":[{\"fn\":\"count\"}],\"where\":[{\"field\":\"double1\",\"op\":\"=\",\"value\":\"1 OR 1=1\"}]}",
                "number");
        assertBad(
                ctx,
                "{\"select\":[{\"fn\":\"count\"}],\"where\":[{\"field\":\"blob1\",\"op\":\"LIKE\",\"value\":\"%\"}]}",
                "unknown operator");
        assertBad(ctx, "{\"select\":[{\"fn\":\"count\"}],\"order_by\":[{\"by\":\"1; --\"}]}", "not a column");
    }

    @Test
    void dataPointsOutsideTheShapeAreRefusedAndNothingIsStored() throws Exception {
        TestResourceContext ctx = new TestResourceContext(dataSource, null, Map.of());
        assertThrows(ResourceException.class, () -> provider.write(ctx, List.of()));
        assertThrows(
                ResourceException.class,
                () -> provider.write(ctx, List.of(new DataPoint(null, List.of("a", "b"), null, null))));
        assertThrows(
                ResourceException.class,
                () -> provider.write(ctx, List.of(new DataPoint(null, List.of("x".repeat(97)), null, null))));
        List<String> blobs = new ArrayList<>();
        for (int i = 0; i < 21; i++) {
            blobs.add("b");
        }
        assertThrows(
                ResourceException.class, () -> provider.write(ctx, List.of(new DataPoint(null, null, blobs, null))));
        ResourceException big = assertThrows(
                ResourceException.class,
                () -> provider.write(ctx, List.of(new DataPoint(null, null, List.of("x".repeat(16_385)), null))));
        assertEquals(ResourceException.Kind.TOO_LARGE, big.kind());
        assertThrows(
                ResourceException.class,
                () -> provider.write(
                        ctx,
                        List.of(
                                new DataPoint(null, null, null, List.of(1.0)),
                                new DataPoint(null, null, null, List.of(Double.NaN)))));
        assertEquals(
                List.of(List.of(0L)),
                provider.query(ctx, "{\"select\":[{\"fn\":\"count\"}]}").rows());
    }

    @Test
    void aQueryOverTheTimeLimitIsCancelledAsTheClientsFault() throws Exception {
        AnalyticsProvider strict = provider(Map.of("queryTimeoutMillis", 1));
        TestResourceContext ctx = new TestResourceContext(dataSource, null, Map.of());
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(
                    "INSERT INTO resource_analytics_points (resource_id, ts, blobs, doubles) SELECT '"
                            + ctx.resourceId()
                            + "', now() - g * interval '1 second', ARRAY[md5(g::text)], ARRAY[g::float8] FROM generate_series(1, 300000) g");
        }
        ResourceException e = assertThrows(
                ResourceException.class,
                () -> strict.query(
                        ctx,
                        "{\"select\":[{\"fn\":\"count_distinct\",\"field\":\"blob1\"},{\"fn\":\"avg\",\"field\":\"double1\"}]}"));
        assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
        assertTrue(e.getMessage().contains("cancelled"), e.getMessage());
        provider.deprovision(ctx);
    }

    static void assertBad(TestResourceContext ctx, String query, String says) {
        ResourceException e = assertThrows(ResourceException.class, () -> provider.query(ctx, query), query);
        assertEquals(ResourceException.Kind.BAD_INPUT, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(says), query + " -> " + e.getMessage());
    }
}
