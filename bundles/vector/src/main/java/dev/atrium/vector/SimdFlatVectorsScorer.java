package dev.atrium.vector;

import java.io.IOException;
import org.apache.lucene.codecs.hnsw.DefaultFlatVectorScorer;
import org.apache.lucene.codecs.hnsw.FlatVectorsScorer;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.util.VectorUtil;
import org.apache.lucene.util.hnsw.RandomAccessVectorValues;
import org.apache.lucene.util.hnsw.RandomVectorScorer;
import org.apache.lucene.util.hnsw.RandomVectorScorerSupplier;

/**
 * Lucene's flat vector scorer ({@code DefaultFlatVectorScorer}) with the float similarities computed by
 * {@link SimdVectors}: the same scores (Lucene's {@link VectorSimilarityFunction#compare(float[], float[])} formulas)
 * for graph searches and graph building. Byte vectors go to Lucene's scorer (this bundle indexes none).
 * Load it only through {@link VectorScorers}: it needs the {@code jdk.incubator.vector} module.
 */
public final class SimdFlatVectorsScorer implements FlatVectorsScorer {

    @Override
    public RandomVectorScorerSupplier getRandomVectorScorerSupplier(
            VectorSimilarityFunction similarity, RandomAccessVectorValues values) throws IOException {
        if (values instanceof RandomAccessVectorValues.Floats floats) {
            return new FloatSupplier(floats, similarity);
        }
        return DefaultFlatVectorScorer.INSTANCE.getRandomVectorScorerSupplier(similarity, values);
    }

    @Override
    public RandomVectorScorer getRandomVectorScorer(
            VectorSimilarityFunction similarity, RandomAccessVectorValues values, float[] target) throws IOException {
        if (!(values instanceof RandomAccessVectorValues.Floats floats)) {
            return DefaultFlatVectorScorer.INSTANCE.getRandomVectorScorer(similarity, values, target);
        }
        if (target.length != values.dimension()) {
            throw new IllegalArgumentException("vector query dimension: " + target.length
                    + " differs from field dimension: " + values.dimension());
        }
        return new QueryScorer(floats, target, similarity);
    }

    @Override
    public RandomVectorScorer getRandomVectorScorer(
            VectorSimilarityFunction similarity, RandomAccessVectorValues values, byte[] target) throws IOException {
        return DefaultFlatVectorScorer.INSTANCE.getRandomVectorScorer(similarity, values, target);
    }

    @Override
    public String toString() {
        return "SimdFlatVectorsScorer(" + SimdVectors.SPECIES + ")";
    }

    /**
     * Runs every similarity once against Lucene's on a small pair of vectors (called by {@link VectorScorers} before
     * it picks this scorer: a missing module or CPU support fails here, not in a query) and names the vector width.
     */
    static String check() {
        int bits = SimdVectors.bits();
        float[] a = new float[37];
        float[] b = new float[37];
        for (int i = 0; i < a.length; i++) {
            a[i] = (i % 7 - 3) * 0.25f;
            b[i] = (i % 5 - 2) * 0.5f + 0.125f;
        }
        // b as Lucene stores it: the byte[] overloads are what queries on disk use, and the JVM resolves each Vector
        // API method only when first called (JDK 20+ dropped fromByteArray: that must fail here, not in a query)
        byte[] stored = new byte[b.length * Float.BYTES];
        java.nio.ByteBuffer.wrap(stored)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .asFloatBuffer()
                .put(b);
        float aNorm = SimdVectors.dotProduct(a, a);
        for (VectorSimilarityFunction f : VectorSimilarityFunction.values()) {
            float lucene = f.compare(a, b);
            for (float simd : new float[] {score(f, a, b), score(f, a, aNorm, b), score(f, a, aNorm, stored)}) {
                if (Math.abs(lucene - simd) > 1e-4f * Math.max(1, Math.abs(lucene))) {
                    throw new IllegalStateException(f + ": " + simd + " where Lucene computes " + lucene);
                }
            }
        }
        // the int8 kernels (SimdQuantizedVectorsScorer's) against plain loops: exact integers here
        byte[] qa = new byte[a.length];
        byte[] qb = new byte[a.length];
        float dot = 0, square = 0;
        for (int i = 0; i < a.length; i++) {
            qa[i] = (byte) (i * 7 % 128);
            qb[i] = (byte) (127 - i * 3 % 128);
            dot += a[i] * qb[i];
            square += (a[i] - qb[i]) * (a[i] - qb[i]);
        }
        float[] wide = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            wide[i] = qa[i];
        }
        float dot8 = 0, square8 = 0;
        for (int i = 0; i < a.length; i++) {
            dot8 += qa[i] * qb[i];
            square8 += (qa[i] - qb[i]) * (qa[i] - qb[i]);
        }
        float[][] pairs = {
            {dot, SimdVectors.dotProductInt8(a, qb)},
            {square, SimdVectors.squareDistanceInt8(a, qb)},
            {dot8, SimdVectors.dotProductInt8(wide, qb)},
            {square8, SimdVectors.squareDistanceInt8(wide, qb)}
        };
        for (float[] p : pairs) {
            if (Math.abs(p[0] - p[1]) > 1e-4f * Math.max(1, Math.abs(p[0]))) {
                throw new IllegalStateException("int8: " + p[1] + " where a plain loop computes " + p[0]);
            }
        }
        return bits + "-bit, " + SimdVectors.SPECIES.length() + " floats a vector";
    }

    /** Lucene's {@link VectorSimilarityFunction#compare(float[], float[])}, with SIMD arithmetic. */
    static float score(VectorSimilarityFunction similarity, float[] a, float[] b) {
        return switch (similarity) {
            case EUCLIDEAN -> 1 / (1 + SimdVectors.squareDistance(a, b));
            case DOT_PRODUCT -> Math.max((1 + SimdVectors.dotProduct(a, b)) / 2, 0);
            case COSINE -> Math.max((1 + SimdVectors.cosine(a, b)) / 2, 0);
            case MAXIMUM_INNER_PRODUCT -> VectorUtil.scaleMaxInnerProductScore(SimdVectors.dotProduct(a, b));
        };
    }

    /** As {@link #score}, with the first vector's squared norm known (cosine needs one pass less). */
    static float score(VectorSimilarityFunction similarity, float[] a, float aNorm, float[] b) {
        if (similarity == VectorSimilarityFunction.COSINE) {
            return Math.max((1 + SimdVectors.cosine(a, aNorm, b)) / 2, 0);
        }
        return score(similarity, a, b);
    }

    /** As {@link #score}, with the second vector as Lucene stores it (little-endian float bytes). */
    static float score(VectorSimilarityFunction similarity, float[] a, float aNorm, byte[] b) {
        return switch (similarity) {
            case EUCLIDEAN -> 1 / (1 + SimdVectors.squareDistance(a, b));
            case DOT_PRODUCT -> Math.max((1 + SimdVectors.dotProduct(a, b)) / 2, 0);
            case COSINE -> Math.max((1 + SimdVectors.cosine(a, aNorm, b)) / 2, 0);
            case MAXIMUM_INNER_PRODUCT -> VectorUtil.scaleMaxInnerProductScore(SimdVectors.dotProduct(a, b));
        };
    }

    /**
     * A query against the vectors of a segment (graph search, exact search). Vectors on disk (Lucene's off-heap
     * values, whose file slice is dense: vector {@code ord} at {@code ord} x its byte length) are read as bytes from
     * that slice — this scorer's own, as Lucene makes the values for each query — and scored from the bytes; others
     * (in memory) as floats.
     */
    private static final class QueryScorer extends RandomVectorScorer.AbstractRandomVectorScorer {
        private final RandomAccessVectorValues.Floats values;
        private final float[] query;
        private final float queryNorm;
        private final VectorSimilarityFunction similarity;
        private final IndexInput slice;
        private final byte[] bytes;

        QueryScorer(RandomAccessVectorValues.Floats values, float[] query, VectorSimilarityFunction similarity) {
            super(values);
            this.values = values;
            this.query = query;
            this.similarity = similarity;
            this.queryNorm = similarity == VectorSimilarityFunction.COSINE ? SimdVectors.dotProduct(query, query) : 0;
            IndexInput in = values.getSlice();
            boolean dense = in != null && values.getVectorByteLength() == query.length * Float.BYTES;
            this.slice = dense ? in : null;
            this.bytes = dense ? new byte[query.length * Float.BYTES] : null;
        }

        @Override
        public float score(int node) throws IOException {
            if (slice == null) {
                return SimdFlatVectorsScorer.score(similarity, query, queryNorm, values.vectorValue(node));
            }
            slice.seek((long) node * bytes.length);
            slice.readBytes(bytes, 0, bytes.length);
            return SimdFlatVectorsScorer.score(similarity, query, queryNorm, bytes);
        }
    }

    /** Scores between vectors of one segment (graph building and merging), as Lucene's own supplier. */
    private static final class FloatSupplier implements RandomVectorScorerSupplier {
        private final RandomAccessVectorValues.Floats values;
        private final RandomAccessVectorValues.Floats values1;
        private final RandomAccessVectorValues.Floats values2;
        private final VectorSimilarityFunction similarity;

        FloatSupplier(RandomAccessVectorValues.Floats values, VectorSimilarityFunction similarity) throws IOException {
            this.values = values;
            this.values1 = values.copy();
            this.values2 = values.copy();
            this.similarity = similarity;
        }

        @Override
        public RandomVectorScorer scorer(int ord) {
            return new RandomVectorScorer.AbstractRandomVectorScorer(values) {
                @Override
                public float score(int node) throws IOException {
                    // read again every time (Lucene's off-heap values keep the last one read): another scorer of
                    // this supplier may have read values1 since
                    return SimdFlatVectorsScorer.score(similarity, values1.vectorValue(ord), values2.vectorValue(node));
                }
            };
        }

        @Override
        public RandomVectorScorerSupplier copy() throws IOException {
            return new FloatSupplier(values, similarity);
        }

        @Override
        public String toString() {
            return "SimdFlatVectorsScorer.FloatSupplier(similarity=" + similarity + ")";
        }
    }
}
