package dev.atrium.vector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.util.hnsw.RandomAccessVectorValues;
import org.apache.lucene.util.hnsw.RandomVectorScorer;
import org.apache.lucene.util.hnsw.RandomVectorScorerSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The SIMD scorer against Lucene's own (scalar on Java 17) on random vectors, for every similarity and for dimensions
 * that are not multiples of the vector width (the tails), up to 1,536. This test JVM runs with
 * {@code --add-modules jdk.incubator.vector}, as the server does.
 */
class SimdVectorsTest {

    @Test
    void thisJvmComputesDistancesWithTheVectorApi() {
        VectorScorers.Choice choice = VectorScorers.choice();
        assertTrue(choice.simd(), choice.description());
        assertTrue(choice.description().startsWith("simd (jdk.incubator.vector, "), choice.description());
        assertTrue(
                choice.scorer() instanceof SimdFlatVectorsScorer,
                choice.scorer().toString());
    }

    @ParameterizedTest(name = "{0} dimensions")
    @ValueSource(ints = {1, 7, 16, 383, 384, 1536})
    void simdScoresAreLucenesForEverySimilarity(int dims) throws Exception {
        Random r = new Random(dims);
        List<float[]> vectors = new ArrayList<>();
        List<float[]> units = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            float[] v = random(r, dims);
            if (i % 8 == 0) {
                for (int j = 0; j < dims; j++) {
                    v[j] *= 1000; // large magnitudes: the tolerance is relative
                }
            }
            vectors.add(v);
            units.add(unit(v));
        }
        for (VectorSimilarityFunction f : VectorSimilarityFunction.values()) {
            List<float[]> vs =
                    f == VectorSimilarityFunction.DOT_PRODUCT ? units : vectors; // DOT_PRODUCT is for unit vectors
            for (float[] a : vs) {
                float aNorm = SimdVectors.dotProduct(a, a);
                for (float[] b : vs) {
                    float lucene = f.compare(a, b);
                    String what = f + " " + dims + "-d";
                    assertClose(lucene, SimdFlatVectorsScorer.score(f, a, b), a, b, what);
                    assertClose(
                            lucene, SimdFlatVectorsScorer.score(f, a, aNorm, b), a, b, what + " (query norm known)");
                    assertClose(
                            lucene,
                            SimdFlatVectorsScorer.score(f, a, aNorm, bytes(b)),
                            a,
                            b,
                            what + " (the vector as stored bytes)");
                }
            }
            // and through the interfaces Lucene's HNSW search and graph building call
            SimdFlatVectorsScorer scorer = new SimdFlatVectorsScorer();
            RandomAccessVectorValues.Floats values = RandomAccessVectorValues.fromFloats(vs, dims);
            RandomVectorScorer query = scorer.getRandomVectorScorer(f, values, vs.get(3));
            RandomVectorScorerSupplier supplier = scorer.getRandomVectorScorerSupplier(f, values);
            RandomVectorScorer fromFive = supplier.scorer(5);
            RandomVectorScorer fromSix = supplier.copy().scorer(6);
            for (int i = 0; i < vs.size(); i++) {
                assertClose(f.compare(vs.get(3), vs.get(i)), query.score(i), vs.get(3), vs.get(i), f + " query scorer");
                assertClose(f.compare(vs.get(5), vs.get(i)), fromFive.score(i), vs.get(5), vs.get(i), f + " supplier");
                assertClose(
                        f.compare(vs.get(6), vs.get(i)), fromSix.score(i), vs.get(6), vs.get(i), f + " supplier copy");
            }
            assertEquals(vs.size(), query.maxOrd());
        }
    }

    @Test
    void theRawArithmeticIsLucenesOnTails() {
        Random r = new Random(3);
        for (int dims = 1; dims <= 200; dims++) {
            float[] a = random(r, dims);
            float[] b = random(r, dims);
            assertEquals(
                    org.apache.lucene.util.VectorUtil.dotProduct(a, b),
                    SimdVectors.dotProduct(a, b),
                    1e-5 * (1 + absDot(a, b)),
                    dims + "-d dot");
            assertEquals(
                    org.apache.lucene.util.VectorUtil.squareDistance(a, b),
                    SimdVectors.squareDistance(a, b),
                    1e-5 * (1 + org.apache.lucene.util.VectorUtil.squareDistance(a, b)),
                    dims + "-d square distance");
            assertEquals(
                    org.apache.lucene.util.VectorUtil.cosine(a, b), SimdVectors.cosine(a, b), 1e-5, dims + "-d cosine");
            assertEquals(
                    org.apache.lucene.util.VectorUtil.cosine(a, b),
                    SimdVectors.cosine(a, SimdVectors.dotProduct(a, a), b),
                    1e-5,
                    dims + "-d cosine, norm known");
            byte[] stored = bytes(b);
            assertEquals(
                    org.apache.lucene.util.VectorUtil.dotProduct(a, b),
                    SimdVectors.dotProduct(a, stored),
                    1e-5 * (1 + absDot(a, b)),
                    dims + "-d dot, bytes");
            assertEquals(
                    org.apache.lucene.util.VectorUtil.squareDistance(a, b),
                    SimdVectors.squareDistance(a, stored),
                    1e-5 * (1 + org.apache.lucene.util.VectorUtil.squareDistance(a, b)),
                    dims + "-d square distance, bytes");
            assertEquals(
                    org.apache.lucene.util.VectorUtil.cosine(a, b),
                    SimdVectors.cosine(a, SimdVectors.dotProduct(a, a), stored),
                    1e-5,
                    dims + "-d cosine, bytes");
        }
    }

    /** Float sums added in another order: equal up to a few ulps of the sum of the terms' magnitudes. */
    private static void assertClose(float expected, float actual, float[] a, float[] b, String what) {
        double tolerance = 1e-5 * Math.max(1, Math.abs(expected));
        // a score that is a function of a large dot product or distance is as close as that is
        tolerance = Math.max(tolerance, 1e-6 * absDot(a, b) * Math.max(1, expected * expected));
        assertEquals(expected, actual, tolerance, what);
    }

    private static double absDot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += Math.abs((double) a[i] * b[i]);
        }
        return s;
    }

    /** A vector as Lucene writes it to its .vec file: little-endian floats. */
    private static byte[] bytes(float[] v) {
        java.nio.ByteBuffer b =
                java.nio.ByteBuffer.allocate(v.length * Float.BYTES).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return b.array();
    }

    private static float[] unit(float[] v) {
        double n = 0;
        for (float f : v) {
            n += f * f;
        }
        n = Math.sqrt(n);
        float[] u = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            u[i] = (float) (v[i] / n);
        }
        return u;
    }

    static float[] random(Random r, int dims) {
        float[] v = new float[dims];
        for (int i = 0; i < dims; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }
}
