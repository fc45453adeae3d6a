package dev.atrium.vector;

import java.io.IOException;
import org.apache.lucene.codecs.hnsw.FlatVectorsScorer;
import org.apache.lucene.codecs.lucene99.Lucene99ScalarQuantizedVectorScorer;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.util.VectorUtil;
import org.apache.lucene.util.hnsw.RandomAccessVectorValues;
import org.apache.lucene.util.hnsw.RandomVectorScorer;
import org.apache.lucene.util.hnsw.RandomVectorScorerSupplier;
import org.apache.lucene.util.quantization.RandomAccessQuantizedByteVectorValues;
import org.apache.lucene.util.quantization.ScalarQuantizer;

/**
 * The scorer of {@link AtriumHnswQuantizedVectorsFormat}'s int8 vectors (Lucene's 7-bit scalar quantization: each
 * value {@code v ≈ alpha·q + min}, {@code q} in 0..127, {@code alpha = (max - min) / 127}), on {@link SimdVectors}.
 * <ul>
 * <li>A query (graph search) is scored <em>asymmetrically</em>: the float query against the int8 vector, with no
 * quantization of the query ({@code x·v ≈ alpha·Σ x·q + min·Σ x}; for euclidean {@code |x - v|² = alpha²·Σ (x' - q)²}
 * with {@code x' = (x - min)/alpha}). Lucene's own scorer quantizes the query as well, adding its rounding error.</li>
 * <li>Two stored vectors (graph building during a merge) are scored as Lucene does (its formula with each vector's
 * stored correction), only with SIMD arithmetic.</li>
 * <li>Everything else — float vectors (a flush builds its graph on them), 4-bit vectors, byte queries — goes to
 * Lucene's quantized scorer over {@link VectorScorers}' float scorer.</li>
 * </ul>
 * Scores are approximate; {@link HnswIndexes} scores the candidates again exactly on the float vectors the format
 * keeps beside the int8 ones. Load it only through {@link VectorScorers}: it needs the {@code jdk.incubator.vector}
 * module.
 */
public final class SimdQuantizedVectorsScorer implements FlatVectorsScorer {

    private final FlatVectorsScorer lucene;

    SimdQuantizedVectorsScorer(FlatVectorsScorer floats) {
        this.lucene = new Lucene99ScalarQuantizedVectorScorer(floats);
    }

    /** The int8 values this scorer computes itself: 7-bit, one byte a dimension. */
    private static RandomAccessQuantizedByteVectorValues int8(RandomAccessVectorValues values) {
        if (values instanceof RandomAccessQuantizedByteVectorValues q
                && q.getScalarQuantizer().getBits() > 4
                && q.getVectorByteLength() == q.dimension()) {
            return q;
        }
        return null;
    }

    @Override
    public RandomVectorScorerSupplier getRandomVectorScorerSupplier(
            VectorSimilarityFunction similarity, RandomAccessVectorValues values) throws IOException {
        RandomAccessQuantizedByteVectorValues q = int8(values);
        return q == null ? lucene.getRandomVectorScorerSupplier(similarity, values) : new Supplier(q, similarity);
    }

    @Override
    public RandomVectorScorer getRandomVectorScorer(
            VectorSimilarityFunction similarity, RandomAccessVectorValues values, float[] target) throws IOException {
        RandomAccessQuantizedByteVectorValues q = int8(values);
        if (q == null) {
            return lucene.getRandomVectorScorer(similarity, values, target);
        }
        if (target.length != values.dimension()) {
            throw new IllegalArgumentException("vector query dimension: " + target.length
                    + " differs from field dimension: " + values.dimension());
        }
        return new QueryScorer(q, target, similarity);
    }

    @Override
    public RandomVectorScorer getRandomVectorScorer(
            VectorSimilarityFunction similarity, RandomAccessVectorValues values, byte[] target) throws IOException {
        return lucene.getRandomVectorScorer(similarity, values, target);
    }

    @Override
    public String toString() {
        return "SimdQuantizedVectorsScorer(" + SimdVectors.SPECIES + ")";
    }

    public static float alpha(ScalarQuantizer quantizer) {
        return (quantizer.getUpperQuantile() - quantizer.getLowerQuantile()) / ((1 << quantizer.getBits()) - 1);
    }

    /**
     * The score a float query {@code target} gets against a stored int8 vector {@code q} (its bytes), asymmetric as
     * above; {@code prepared} is {@link #prepare}'s for the target. Also the test's reference.
     */
    public static float score(
            VectorSimilarityFunction similarity, float[] prepared, float constant, float alpha, byte[] q) {
        return switch (similarity) {
            case EUCLIDEAN -> 1 / (1 + alpha * alpha * SimdVectors.squareDistanceInt8(prepared, q));
            case DOT_PRODUCT, COSINE -> Math.max((1 + SimdVectors.dotProductInt8(prepared, q) + constant) / 2, 0);
            case MAXIMUM_INNER_PRODUCT ->
                VectorUtil.scaleMaxInnerProductScore(SimdVectors.dotProductInt8(prepared, q) + constant);
        };
    }

    /**
     * The query as {@link #score} takes it: {@code alpha·x} (x normalized for cosine, as the stored vectors were)
     * for the dot products, {@code (x - min)/alpha} for euclidean; {@code constant[0]} gets {@code min·Σ x}.
     */
    public static float[] prepare(
            VectorSimilarityFunction similarity, float[] target, ScalarQuantizer quantizer, float[] constant) {
        float alpha = alpha(quantizer);
        float min = quantizer.getLowerQuantile();
        float[] x = target.clone();
        if (similarity == VectorSimilarityFunction.COSINE) {
            VectorUtil.l2normalize(x);
        }
        float sum = 0;
        for (int i = 0; i < x.length; i++) {
            sum += x[i];
            x[i] = similarity == VectorSimilarityFunction.EUCLIDEAN ? (x[i] - min) / alpha : x[i] * alpha;
        }
        constant[0] = similarity == VectorSimilarityFunction.EUCLIDEAN ? 0 : min * sum;
        return x;
    }

    /** A float query against a segment's int8 vectors, read from the file slice (Lucene makes the values per query). */
    private static final class QueryScorer extends RandomVectorScorer.AbstractRandomVectorScorer {
        private final RandomAccessQuantizedByteVectorValues values;
        private final VectorSimilarityFunction similarity;
        private final float[] prepared;
        private final float constant;
        private final float alpha;
        private final IndexInput slice;
        private final byte[] bytes;
        private final long stride;

        QueryScorer(RandomAccessQuantizedByteVectorValues values, float[] target, VectorSimilarityFunction similarity) {
            super(values);
            this.values = values;
            this.similarity = similarity;
            ScalarQuantizer quantizer = values.getScalarQuantizer();
            float[] c = new float[1];
            this.prepared = prepare(similarity, target, quantizer, c);
            this.constant = c[0];
            this.alpha = alpha(quantizer);
            this.slice = values.getSlice();
            this.bytes = new byte[values.dimension()];
            this.stride =
                    (long) values.getVectorByteLength() + Float.BYTES; // each vector's bytes, then its float correction
        }

        @Override
        public float score(int node) throws IOException {
            byte[] q;
            if (slice != null) {
                slice.seek(node * stride);
                slice.readBytes(bytes, 0, bytes.length);
                q = bytes;
            } else {
                q = values.vectorValue(node);
            }
            return SimdQuantizedVectorsScorer.score(similarity, prepared, constant, alpha, q);
        }
    }

    /** Two stored vectors of a segment (graph building during a merge): Lucene's quantized formula, SIMD arithmetic. */
    private static final class Supplier implements RandomVectorScorerSupplier {
        private final RandomAccessQuantizedByteVectorValues values;
        private final VectorSimilarityFunction similarity;
        private final float multiplier;

        Supplier(RandomAccessQuantizedByteVectorValues values, VectorSimilarityFunction similarity) {
            this.values = values;
            this.similarity = similarity;
            this.multiplier = values.getScalarQuantizer().getConstantMultiplier();
        }

        @Override
        public RandomVectorScorer scorer(int ord) throws IOException {
            RandomAccessQuantizedByteVectorValues others = values.copy();
            byte[] stored = values.vectorValue(ord);
            float[] query = new float[stored.length]; // widened once: every score is then one int8 read
            for (int i = 0; i < stored.length; i++) {
                query[i] = stored[i];
            }
            float queryOffset = values.getScoreCorrectionConstant(ord);
            return new RandomVectorScorer.AbstractRandomVectorScorer(values) {
                @Override
                public float score(int node) throws IOException {
                    byte[] other = others.vectorValue(node);
                    if (similarity == VectorSimilarityFunction.EUCLIDEAN) {
                        return 1 / (1 + multiplier * SimdVectors.squareDistanceInt8(query, other));
                    }
                    float adjusted = SimdVectors.dotProductInt8(query, other) * multiplier
                            + queryOffset
                            + others.getScoreCorrectionConstant(node);
                    return similarity == VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT
                            ? VectorUtil.scaleMaxInnerProductScore(adjusted)
                            : (1 + adjusted) / 2;
                }
            };
        }

        @Override
        public RandomVectorScorerSupplier copy() throws IOException {
            return new Supplier(values.copy(), similarity);
        }

        @Override
        public String toString() {
            return "SimdQuantizedVectorsScorer.Supplier(similarity=" + similarity + ")";
        }
    }
}
