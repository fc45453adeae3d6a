package dev.atrium.resource.vectorize.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.TestResourceContext;
import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The vectorize provider on a fresh database of the PostgreSQL at 127.0.0.1:5432 (ATRIUM_TEST_PG overrides) and on
 * real Lucene indexes in a temporary directory: both index kinds answer the same questions the same way.
 */
class VectorizeProviderTest {

    static final String HOST = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
    static final String DATABASE =
            "atrium_vec_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    static PGSimpleDataSource dataSource;

    @TempDir
    Path dir;

    @BeforeAll
    static void createDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres");
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        }
        dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://" + HOST + "/" + DATABASE + "?user=postgres");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + "/postgres?user=postgres");
                Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
        }
    }

    /** A provider as DS would make it, with the bundle's migration run directly and {@code overrides} over the config defaults. */
    static VectorizeProvider provider(PGSimpleDataSource ds, Map<String, Object> overrides) {
        SchemaMigrations migrations = bundle -> {
            try (InputStream in = VectorizeProvider.class.getResourceAsStream("/db/migration/V1__vectorize.sql");
                    Connection c = ds.getConnection();
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
                VectorizeProviderTest.class.getClassLoader(),
                new Class<?>[] {BundleContext.class},
                (proxy, method, args) -> null);
        VectorizeProvider.Config config = (VectorizeProvider.Config) Proxy.newProxyInstance(
                VectorizeProviderTest.class.getClassLoader(),
                new Class<?>[] {VectorizeProvider.Config.class},
                (proxy, method, args) -> overrides.getOrDefault(method.getName(), method.getDefaultValue()));
        return new VectorizeProvider(ds, migrations, context, config);
    }

    TestResourceContext resource(VectorizeProvider p, String index, String metric, int dims) throws ResourceException {
        Map<String, Object> config =
                p.configSchema().validate(Map.of("index", index, "metric", metric, "dimensions", dims));
        TestResourceContext ctx = new TestResourceContext(
                dataSource, dir.resolve(UUID.randomUUID().toString()), config);
        p.provision(ctx);
        return ctx;
    }

    static float[] random(Random r, int dims) {
        float[] v = new float[dims];
        for (int i = 0; i < dims; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"exact,cosine", "exact,dot", "exact,euclidean", "hnsw,cosine", "hnsw,dot", "hnsw,euclidean"})
    void queryReturnsTheNearestVectorsBestFirstWithTheirMetadata(String index, String metric) throws Exception {
        VectorizeProvider p = provider(dataSource, Map.of());
        try {
            TestResourceContext ctx = resource(p, index, metric, 8);
            Random r = new Random(7);
            List<Vector> vectors = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                vectors.add(new Vector(
                        "v" + i, random(r, 8), Map.of("n", i, "even", i % 2 == 0, "tag", i % 3 == 0 ? "a" : "b")));
            }
            p.upsert(ctx, vectors);
            float[] q = random(r, 8);
            Vectors.Metric m = Vectors.Metric.of(metric);
            List<Vector> sorted = new ArrayList<>(vectors);
            sorted.sort((a, b) ->
                    Double.compare(m.score(q, Vectors.norm(q), b.values()), m.score(q, Vectors.norm(q), a.values())));

            List<Match> top = p.query(ctx, q, 5, Map.of());
            assertEquals(List.of("queries"), ctx.admitted, "a query asks billing's gate first");
            assertEquals(
                    sorted.subList(0, 5).stream().map(Vector::id).toList(),
                    top.stream().map(Match::id).toList());
            assertEquals(
                    m.score(q, Vectors.norm(q), sorted.get(0).values()),
                    top.get(0).score(),
                    1e-4,
                    "the score is the metric's");
            assertEquals(
                    sorted.get(0).metadata().get("tag"), top.get(0).metadata().get("tag"));

            List<Match> filtered = p.query(ctx, q, 5, Map.of("even", true, "tag", "a"));
            List<String> expected = sorted.stream()
                    .filter(v -> v.metadata().get("even").equals(true)
                            && v.metadata().get("tag").equals("a"))
                    .limit(5)
                    .map(Vector::id)
                    .toList();
            assertEquals(expected, filtered.stream().map(Match::id).toList());
            assertEquals(
                    List.of("v42"),
                    p.query(ctx, q, 5, Map.of("n", 42.0)).stream()
                            .map(Match::id)
                            .toList(),
                    "1 and 1.0 are equal");
            assertEquals(List.of(), p.query(ctx, q, 5, Map.of("tag", "none")));
        } finally {
            p.stop();
        }
    }

    @ParameterizedTest
    @CsvSource({"exact", "hnsw"})
    void upsertReplacesByIdAndDeleteCountsWhatExisted(String index) throws Exception {
        VectorizeProvider p = provider(dataSource, Map.of());
        try {
            TestResourceContext ctx = resource(p, index, "cosine", 3);
            p.upsert(
                    ctx,
                    List.of(
                            new Vector("a", new float[] {1, 0, 0}, Map.of("v", 1)),
                            new Vector("b", new float[] {0, 1, 0}, Map.of())));
            p.upsert(ctx, List.of(new Vector("a", new float[] {0, 0, 1}, Map.of("v", 2))));
            List<Match> top = p.query(ctx, new float[] {0, 0, 1}, 1, Map.of());
            assertEquals("a", top.get(0).id());
            assertEquals(2, ((Number) top.get(0).metadata().get("v")).intValue());
            assertEquals(1.0, top.get(0).score(), 1e-5);
            assertEquals(2L, p.connectionInfo(ctx).get("vectors"));
            assertEquals(1, p.delete(ctx, List.of("a", "missing")));
            assertEquals(
                    List.of("b"),
                    p.query(ctx, new float[] {0, 0, 1}, 10, Map.of()).stream()
                            .map(Match::id)
                            .toList());
            assertEquals(5, ctx.used("writes"), "2 + 1 vectors written, 2 ids deleted");
        } finally {
            p.stop();
        }
    }

    @ParameterizedTest
    @CsvSource({"exact", "hnsw"})
    void badInputIsRefusedAndNothingIsStored(String index) throws Exception {
        VectorizeProvider p = provider(dataSource, Map.of());
        try {
            TestResourceContext ctx = resource(p, index, "cosine", 3);
            assertBad(
                    () -> p.upsert(ctx, List.of(new Vector("a", new float[] {1, 0}, Map.of()))),
                    "has 2 values; this index takes 3");
            assertBad(() -> p.upsert(ctx, List.of(new Vector("a", new float[] {0, 0, 0}, Map.of()))), "all zeros");
            assertBad(() -> p.upsert(ctx, List.of(new Vector("a", new float[] {Float.NaN, 0, 1}, Map.of()))), "finite");
            assertBad(() -> p.upsert(ctx, List.of(new Vector("", new float[] {1, 0, 0}, Map.of()))), "id");
            assertBad(
                    () -> p.upsert(
                            ctx,
                            List.of(
                                    new Vector("x", new float[] {1, 0, 0}, Map.of()),
                                    new Vector("x", new float[] {1, 0, 0}, Map.of()))),
                    "twice");
            assertBad(() -> p.query(ctx, new float[] {1, 0, 0}, 0, Map.of()), "topK");
            assertBad(() -> p.query(ctx, new float[] {1, 0, 0}, 101, Map.of()), "topK");
            assertBad(() -> p.query(ctx, new float[] {1, 0, 0}, 1, Map.of("a", List.of(1))), "equality");
            assertBad(() -> p.update(ctx, Map.of("index", index, "metric", "dot", "dimensions", 3L)), "fixed");
            ResourceException big = assertThrows(
                    ResourceException.class,
                    () -> p.upsert(
                            ctx, List.of(new Vector("m", new float[] {1, 0, 0}, Map.of("s", "x".repeat(20_000))))));
            assertEquals(ResourceException.Kind.TOO_LARGE, big.kind());
            assertEquals(0L, p.connectionInfo(ctx).get("vectors"));
        } finally {
            p.stop();
        }
    }

    @Test
    void anExactIndexRefusesToGrowPastTheOperatorsLimitAndKeepsWhatItHad() throws Exception {
        VectorizeProvider p = provider(dataSource, Map.of("maxExactVectors", 3L));
        TestResourceContext ctx = resource(p, "exact", "euclidean", 2);
        p.upsert(ctx, List.of(new Vector("a", new float[] {1, 0}, null), new Vector("b", new float[] {0, 1}, null)));
        ResourceException e = assertThrows(
                ResourceException.class,
                () -> p.upsert(
                        ctx,
                        List.of(new Vector("c", new float[] {1, 1}, null), new Vector("d", new float[] {2, 1}, null))));
        assertEquals(ResourceException.Kind.TOO_LARGE, e.kind());
        assertTrue(e.getMessage().contains("hnsw"), e.getMessage());
        assertEquals(2L, p.connectionInfo(ctx).get("vectors"));
        p.upsert(ctx, List.of(new Vector("a", new float[] {3, 3}, null))); // a replacement does not grow it
        p.deprovision(ctx);
        assertEquals(0L, p.connectionInfo(ctx).get("vectors"));
    }

    @Test
    void anHnswIndexSurvivesTheProviderStoppingAndIsDeletedWithTheResource() throws Exception {
        VectorizeProvider first = provider(dataSource, Map.of());
        TestResourceContext ctx = resource(first, "hnsw", "cosine", 4);
        Random r = new Random(3);
        List<Vector> vectors = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            vectors.add(new Vector("v" + i, random(r, 4), new HashMap<>(Map.of("i", i))));
        }
        first.upsert(ctx, vectors);
        first.stop();
        assertThrows(
                ResourceException.class,
                () -> first.query(ctx, new float[] {1, 0, 0, 0}, 1, Map.of()),
                "a stopped provider answers no more");

        VectorizeProvider second = provider(dataSource, Map.of());
        assertEquals(50L, second.connectionInfo(ctx).get("vectors"));
        // which code computes its distances, for a person to check: the Vector API here (surefire adds the module)
        assertTrue(
                String.valueOf(second.connectionInfo(ctx).get("scorer")).startsWith("simd (jdk.incubator.vector, "),
                second.connectionInfo(ctx).toString());
        assertEquals(
                "v7",
                second.query(ctx, vectors.get(7).values(), 1, Map.of()).get(0).id());
        Path lucene = ctx.dataDirectory().resolve("lucene");
        assertTrue(Files.exists(lucene));
        second.deprovision(ctx);
        assertFalse(Files.exists(lucene));
        second.stop();
    }

    @Test
    void anHnswIndexIsMergedIntoOneGraphOnceWritesPauseAndAnswersTheSame() throws Exception {
        VectorizeProvider p = provider(dataSource, Map.of("hnswMergeDelayMillis", 300L));
        try {
            TestResourceContext ctx = resource(p, "hnsw", "cosine", 8);
            Random r = new Random(11);
            List<Vector> vectors = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                vectors.add(new Vector("v" + i, random(r, 8), Map.of("i", i)));
            }
            for (int i = 0; i < 300; i += 100) {
                p.upsert(ctx, vectors.subList(i, i + 100)); // each write commits a segment
            }
            p.delete(ctx, List.of("v0", "v1"));
            float[] q = random(r, 8);
            List<String> before =
                    p.query(ctx, q, 5, Map.of()).stream().map(Match::id).toList();

            long deadline = System.nanoTime() + 30_000_000_000L;
            while (p.hnswSegments(ctx) > 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(1, p.hnswSegments(ctx), "merged into one segment after the writes");
            assertEquals(
                    before, p.query(ctx, q, 5, Map.of()).stream().map(Match::id).toList());
            assertEquals(298L, p.connectionInfo(ctx).get("vectors"));
        } finally {
            p.stop();
        }
    }

    @Test
    void anHnswIndexKeepsItsSegmentsWhenBackgroundMergingIsOff() throws Exception {
        VectorizeProvider p = provider(dataSource, Map.of("hnswMergeDelayMillis", 0L));
        try {
            TestResourceContext ctx = resource(p, "hnsw", "euclidean", 4);
            Random r = new Random(12);
            for (int i = 0; i < 3; i++) {
                p.upsert(ctx, List.of(new Vector("v" + i, random(r, 4), null)));
            }
            Thread.sleep(500);
            assertEquals(3, p.hnswSegments(ctx));
        } finally {
            p.stop();
        }
    }

    interface Call {
        void run() throws Exception;
    }

    static void assertBad(Call call, String says) {
        ResourceException e = assertThrows(ResourceException.class, call::run);
        assertEquals(ResourceException.Kind.BAD_INPUT, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(says), e.getMessage());
    }
}
