package dev.atrium.resource.vectorize.internal;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import dev.atrium.resource.api.VectorFacet;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;
import dev.atrium.vector.FlatScanRule;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * {@code vectorize} resources (backend {@code local}): dimensions, metric and index kind fixed when the resource is
 * created. {@code index: exact} (the default) keeps the vectors in PostgreSQL and scans them on every query — exact,
 * for small indexes up to {@code maxExactVectors}; {@code index: hnsw} keeps them in a Lucene index in the resource's
 * data directory and searches its HNSW graph — approximate, for large ones.
 */
@Component(service = ResourceProvider.class, configurationPid = "dev.atrium.resource.vectorize")
@ResourceProviderType(type = "vectorize", backend = "local")
@Designate(ocd = VectorizeProvider.Config.class)
public class VectorizeProvider implements ResourceProvider, VectorFacet {

    @ObjectClassDefinition(name = "Atrium vectorize resources")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Most vectors an index: exact resource holds; an upsert beyond it is refused (413) and the client is told to use index: hnsw")
        long maxExactVectors() default 10_000;

        @AttributeDefinition(description = "Most vectors in one upsert or ids in one delete")
        int maxBatch() default 1000;

        @AttributeDefinition(description = "Largest topK of a query")
        int maxTopK() default 100;

        @AttributeDefinition(description = "HNSW graph: neighbours per node (Lucene maxConn / M)")
        int hnswMaxConn() default 32;

        @AttributeDefinition(description = "HNSW graph: candidates while building (Lucene beamWidth / efConstruction)")
        int hnswBeamWidth() default 200;

        @AttributeDefinition(
                description =
                        "HNSW query: the graph is searched for topK x this many candidates (ef), the best topK returned")
        int hnswOversample() default 10;

        @AttributeDefinition(
                description =
                        "HNSW index: after this many milliseconds without a write, its segments are merged into one graph in the background (0: never; Lucene's own merge policy still merges some)")
        long hnswMergeDelayMillis() default 2000;

        @AttributeDefinition(
                description =
                        "HNSW index: walk the graph on int8 (scalar-quantized) vectors and score the candidates again exactly on the float ones; existing indexes in the other format are rewritten by the background merge")
        boolean hnswQuantized() default true;

        @AttributeDefinition(
                description =
                        "HNSW query: score every int8 vector of a segment in file order instead of walking its graph when the walk would visit so much of it that the scan is cheaper (large ef on hard data); false: always walk")
        boolean hnswFlatScan() default true;
    }

    static final String FIXED =
            "dimensions, metric and index are fixed when a vectorize index is created; create a new index to change them";

    private final Config config;
    private final ExactIndex exact;
    private final HnswIndexes hnsw;

    @Activate
    public VectorizeProvider(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            BundleContext context,
            Config config) {
        migrations.apply(context.getBundle());
        this.config = config;
        this.exact = new ExactIndex(new Sql(dataSource));
        this.hnsw = new HnswIndexes(new HnswIndexes.Tuning(
                config.hnswMaxConn(),
                config.hnswBeamWidth(),
                Math.max(1, config.hnswOversample()),
                config.hnswMergeDelayMillis(),
                config.hnswQuantized(),
                config.hnswFlatScan()));
    }

    @Deactivate
    void stop() {
        hnsw.close();
    }

    @Override
    public ConfigSchema configSchema() {
        return SCHEMA;
    }

    /** What an index's configuration fixes at its creation. */
    private record Shape(int dimensions, String metric, String index) {
        boolean hnsw() {
            return "hnsw".equals(index);
        }

        Metric nearness() {
            return Metric.of(metric);
        }
    }

    private static Shape shape(ResourceContext ctx) {
        return SCHEMA.read(ctx.config(), Shape.class);
    }

    private static final ConfigSchema SCHEMA = ConfigSchema.builder()
            .integer("dimensions", "values per vector (fixed at creation; 384 fits bge-small embeddings)", 1, 4096, 384)
            .string(
                    "metric",
                    "how nearness is measured (fixed at creation)",
                    false,
                    List.of("cosine", "dot", "euclidean"),
                    "cosine")
            .string(
                    "index",
                    "exact: PostgreSQL, exact scan, for small indexes (up to the operator's maxExactVectors); hnsw: Lucene HNSW graph, approximate, for large ones",
                    false,
                    List.of("exact", "hnsw"),
                    "exact")
            .build();

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        if (hnsw(ctx)) {
            hnsw.count(
                    ctx.resourceId(),
                    ctx.dataDirectory()); // creates the empty index now: a broken data directory fails the create
        }
        return Map.of();
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) throws ResourceException {
        // an index stored before its configuration named every field has the defaults of the ones it lacks
        if (!SCHEMA.read(ctx.config(), Shape.class).equals(SCHEMA.read(newConfig, Shape.class))) {
            throw ResourceException.badInput(FIXED);
        }
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        if (hnsw(ctx)) {
            hnsw.drop(ctx.resourceId(), ctx.dataDirectory());
        } else {
            exact.drop(ctx.resourceId());
        }
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) throws ResourceException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", "local");
        Shape shape = shape(ctx);
        m.put("index", shape.index());
        m.put("dimensions", shape.dimensions());
        m.put("metric", shape.metric());
        m.put("vectors", hnsw(ctx) ? hnsw.count(ctx.resourceId(), ctx.dataDirectory()) : exact.count(ctx.resourceId()));
        if (hnsw(ctx)) {
            m.put("scorer", hnsw.scorer()); // "simd (jdk.incubator.vector, ...)" or "scalar (...; why)"
            m.put(
                    "quantized",
                    config.hnswQuantized()); // the graph walked on int8 vectors, candidates scored again on floats
        }
        return m;
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            if (hnsw(ctx)) {
                hnsw.count(ctx.resourceId(), ctx.dataDirectory());
            } else {
                exact.count(ctx.resourceId());
            }
            return Health.ok();
        } catch (ResourceException | RuntimeException e) {
            return Health.failing(hnsw(ctx) ? "the Lucene index cannot be opened" : "PostgreSQL does not answer");
        }
    }

    @Override
    public void upsert(ResourceContext ctx, List<Vector> vectors) throws ResourceException {
        if (vectors == null || vectors.isEmpty()) {
            throw ResourceException.badInput("an upsert needs at least one vector");
        }
        if (vectors.size() > config.maxBatch()) {
            throw new ResourceException(
                    ResourceException.Kind.TOO_LARGE, "at most " + config.maxBatch() + " vectors per upsert");
        }
        Shape shape = shape(ctx);
        Metric metric = shape.nearness();
        for (Vector v : vectors) {
            Vectors.check(v, shape.dimensions(), metric);
        }
        Vectors.distinct(vectors);
        if (shape.hnsw()) {
            hnsw.upsert(ctx.resourceId(), ctx.dataDirectory(), metric, vectors);
        } else {
            exact.upsert(ctx.resourceId(), vectors, config.maxExactVectors());
        }
        ctx.usage().record("writes", vectors.size());
    }

    @Override
    public int delete(ResourceContext ctx, List<String> ids) throws ResourceException {
        if (ids == null || ids.isEmpty()) {
            throw ResourceException.badInput("a delete needs at least one id");
        }
        if (ids.size() > config.maxBatch()) {
            throw new ResourceException(
                    ResourceException.Kind.TOO_LARGE, "at most " + config.maxBatch() + " ids per delete");
        }
        for (String id : ids) {
            if (id == null || id.isEmpty() || id.length() > Vectors.MAX_ID_LENGTH) {
                throw ResourceException.badInput("ids are 1 to " + Vectors.MAX_ID_LENGTH + " characters");
            }
        }
        int deleted = hnsw(ctx)
                ? hnsw.delete(ctx.resourceId(), ctx.dataDirectory(), ids)
                : exact.delete(ctx.resourceId(), ids);
        ctx.usage().record("writes", ids.size());
        return deleted;
    }

    @Override
    public List<Match> query(ResourceContext ctx, float[] query, int topK, Map<String, Object> filter)
            throws ResourceException {
        if (topK < 1 || topK > config.maxTopK()) {
            throw ResourceException.badInput("topK must be between 1 and " + config.maxTopK());
        }
        Shape shape = shape(ctx);
        Metric metric = shape.nearness();
        Vectors.checkValues(query, shape.dimensions(), metric, "the query vector");
        Map<String, Object> f = Vectors.checkFilter(filter);
        ctx.usage().admit("queries");
        List<Match> out = shape.hnsw()
                ? hnsw.query(ctx.resourceId(), ctx.dataDirectory(), metric, query, topK, f)
                : exact.query(ctx.resourceId(), metric, query, topK, f);
        ctx.usage().record("queries", 1);
        return out;
    }

    /** The segments (graphs) a query of an hnsw resource searches; for tests and the bench. */
    int hnswSegments(ResourceContext ctx) throws ResourceException {
        return hnsw.segments(ctx.resourceId(), ctx.dataDirectory());
    }

    /** How hnsw queries searched their segments so far (walked or scanned); for tests and the bench. */
    FlatScanRule.Counts hnswSearchPaths() {
        return hnsw.searchPaths();
    }

    private static boolean hnsw(ResourceContext ctx) {
        return shape(ctx).hnsw();
    }
}
