package dev.atrium.resource.vectorize.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;
import dev.atrium.vector.AtriumHnswQuantizedVectorsFormat;
import dev.atrium.vector.AtriumHnswVectorsFormat;
import dev.atrium.vector.SimdQuantizedVectorsScorer;
import dev.atrium.vector.VectorScorers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.util.quantization.ScalarQuantizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * HNSW indexes whose graph is walked on int8 vectors ({@link AtriumHnswQuantizedVectorsFormat}, the default): the
 * int8 scores are close to the float ones, the answers are the float search's (ids and scores, filters too), recall
 * is not lower than the float graph's, and an index in the other format is rewritten by the background merge while it
 * keeps answering. The scalar fallback (a JVM without the Vector API) is {@link SimdHnswIndexTest}'s probe, which
 * writes and queries an int8 index with Lucene's scorers.
 */
class QuantizedHnswIndexTest {

    static final int K = 10;

    @TempDir
    Path dir;

    @Test
    void theInt8FormatIsReadThroughThisBundlesScorer() {
        assertInstanceOf(
                AtriumHnswQuantizedVectorsFormat.class,
                KnnVectorsFormat.forName("Lucene99HnswScalarQuantizedVectorsFormat"),
                "this bundle's SPI list names its own format for Lucene's int8 HNSW format");
        assertInstanceOf(SimdQuantizedVectorsScorer.class, VectorScorers.quantizedScorer());
    }

    @ParameterizedTest
    @EnumSource(VectorSimilarityFunction.class)
    void aFloatQueryAgainstInt8VectorsScoresAndRanksCloseToTheFloatScores(VectorSimilarityFunction similarity) {
        Random r = new Random(similarity.ordinal());
        int dims = 384;
        List<float[]> vectors = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            float[] v = VectorizeProviderTest.random(r, dims);
            vectors.add(similarity == VectorSimilarityFunction.DOT_PRODUCT ? unit(v) : v);
        }
        // what Lucene's writer does: normalized copies for cosine, quantiles from the vectors, 7 bits
        List<float[]> stored = vectors.stream()
                .map(v -> similarity == VectorSimilarityFunction.COSINE ? unit(v) : v)
                .toList();
        float[] all = new float[stored.size() * dims];
        for (int i = 0; i < stored.size(); i++) {
            System.arraycopy(stored.get(i), 0, all, i * dims, dims);
        }
        float[] quantiles = quantiles(all, 1 - 1f / (dims + 1));
        ScalarQuantizer quantizer = new ScalarQuantizer(quantiles[0], quantiles[1], (byte) 7);
        float alpha = SimdQuantizedVectorsScorer.alpha(quantizer);
        double overlap = 0;
        int queries = 20;
        for (int t = 0; t < queries; t++) {
            float[] query = VectorizeProviderTest.random(r, dims);
            if (similarity == VectorSimilarityFunction.DOT_PRODUCT) {
                query = unit(query);
            }
            float[] constant = new float[1];
            float[] prepared = SimdQuantizedVectorsScorer.prepare(similarity, query, quantizer, constant);
            double[] exact = new double[vectors.size()];
            double[] approx = new double[vectors.size()];
            for (int i = 0; i < vectors.size(); i++) {
                byte[] q = new byte[dims];
                quantizer.quantize(stored.get(i), q, similarity);
                exact[i] = similarity.compare(query, vectors.get(i));
                approx[i] = SimdQuantizedVectorsScorer.score(similarity, prepared, constant[0], alpha, q);
                if (similarity == VectorSimilarityFunction.COSINE
                        || similarity == VectorSimilarityFunction.DOT_PRODUCT) {
                    // (1 + cos) / 2: off by the quantization step's share of the dot product only
                    assertEquals(exact[i], approx[i], 0.01, similarity + " score of vector " + i);
                }
            }
            Set<Integer> top = top(exact, K);
            top.retainAll(top(approx, K));
            overlap += top.size() / (double) K / queries;
        }
        // the graph walk only needs the order: the int8 top-10 of 200 is (nearly) the float one
        assertTrue(overlap >= 0.9, similarity + ": int8 top-10 holds " + overlap + " of the float top-10");
    }

    private static Set<Integer> top(double[] scores, int k) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < scores.length; i++) {
            order.add(i);
        }
        order.sort((a, b) -> Double.compare(scores[b], scores[a]));
        return new HashSet<>(order.subList(0, k));
    }

    @ParameterizedTest
    @EnumSource(Metric.class)
    void anInt8IndexAnswersTheExactTopKWithTheFloatScoresAndFiltersExactly(Metric metric) throws Exception {
        Random r = new Random(20 + metric.ordinal());
        int dims = 48;
        List<Vector> vectors = new ArrayList<>();
        for (int i = 0; i < 900; i++) {
            vectors.add(new Vector("v" + i, VectorizeProviderTest.random(r, dims), Map.of("g", i % 5)));
        }
        for (boolean flatScan : new boolean[] {false, true}) { // ef 1,000: segments walked, or scanned (FlatScanTest)
            Path d = dir.resolve("scan-" + flatScan);
            HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 0, true, flatScan));
            try {
                for (int i = 0; i < vectors.size(); i += 300) {
                    indexes.upsert("r", d, metric, vectors.subList(i, i + 300)); // three segments
                }
                assertEquals(
                        List.of(AtriumHnswQuantizedVectorsFormat.NAME),
                        indexes.formats("r", d).stream().distinct().toList());
                for (int t = 0; t < 20; t++) {
                    float[] q = VectorizeProviderTest.random(r, dims);
                    assertExactWithScores(metric, vectors, q, indexes.query("r", d, metric, q, K, Map.of()));
                    int g = t % 5;
                    List<Vector> group = vectors.stream()
                            .filter(v -> v.metadata().get("g").equals(g))
                            .toList();
                    assertExactWithScores(metric, group, q, indexes.query("r", d, metric, q, K, Map.of("g", g)));
                }
            } finally {
                indexes.close();
            }
        }
    }

    @Test
    void walkingTheGraphOnInt8VectorsFindsAsManyTrueNeighboursAsOnFloats() throws Exception {
        Random r = new Random(3);
        int dims = 96;
        List<Vector> vectors = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            vectors.add(new Vector("v" + i, VectorizeProviderTest.random(r, dims), Map.of()));
        }
        List<float[]> queries = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            queries.add(VectorizeProviderTest.random(r, dims));
        }
        double[] recall = new double[2];
        for (int quantized = 0; quantized < 2; quantized++) {
            Path d = dir.resolve("q" + quantized);
            // ef 50, the graph always walked (no flat scan of the int8 segments): the walk is what is compared
            HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 5, 0, quantized == 1, false));
            try {
                indexes.upsert("r", d, Metric.COSINE, vectors.subList(0, 1000));
                indexes.upsert("r", d, Metric.COSINE, vectors.subList(1000, 2000));
                for (int i = 2000; i < vectors.size(); i += 1000) {
                    indexes.upsert("r", d, Metric.COSINE, vectors.subList(i, i + 1000));
                }
                for (float[] q : queries) {
                    Set<String> truth = new HashSet<>(SimdHnswIndexTest.exactIds(Metric.COSINE, vectors, q));
                    for (Match m : indexes.query("r", d, Metric.COSINE, q, K, Map.of())) {
                        recall[quantized] += truth.contains(m.id()) ? 1.0 / K / queries.size() : 0;
                    }
                }
            } finally {
                indexes.close();
            }
        }
        assertTrue(
                recall[1] >= recall[0] - 0.03,
                "int8 walk recall " + recall[1] + " against the float walk's " + recall[0]);
        assertTrue(recall[1] >= 0.8, "int8 walk recall@10 at ef 50 over 3 graphs of 1,000: " + recall[1]);
    }

    @Test
    void anIndexInTheOtherFormatIsRewrittenByTheBackgroundMergeAndAnswersThroughout() throws Exception {
        Random r = new Random(7);
        int dims = 32;
        List<Vector> vectors = SimdHnswIndexTest.vectors(r, 800, dims);
        // an index as this bundle wrote it before int8: float vectors, one segment
        HnswIndexes before = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 0, false));
        try {
            before.upsert("r", dir, Metric.EUCLIDEAN, vectors);
            assertEquals(List.of(AtriumHnswVectorsFormat.NAME), before.formats("r", dir));
        } finally {
            before.close();
        }
        for (boolean quantized : new boolean[] {true, false}) {
            String wanted = quantized ? AtriumHnswQuantizedVectorsFormat.NAME : AtriumHnswVectorsFormat.NAME;
            HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 200, quantized));
            try {
                long deadline = System.nanoTime() + 60_000_000_000L;
                boolean rewritten = false;
                while (!rewritten && System.nanoTime() < deadline) {
                    float[] q = VectorizeProviderTest.random(r, dims);
                    assertExactWithScores(
                            Metric.EUCLIDEAN, vectors, q, indexes.query("r", dir, Metric.EUCLIDEAN, q, K, Map.of()));
                    rewritten = indexes.formats("r", dir).equals(List.of(wanted));
                    Thread.sleep(50);
                }
                assertTrue(rewritten, "rewritten into " + wanted + ": " + indexes.formats("r", dir));
                assertEquals(800, indexes.count("r", dir));
                float[] q = VectorizeProviderTest.random(r, dims);
                assertExactWithScores(
                        Metric.EUCLIDEAN, vectors, q, indexes.query("r", dir, Metric.EUCLIDEAN, q, K, Map.of()));
            } finally {
                indexes.close();
            }
        }
    }

    static void assertExactWithScores(Metric metric, List<Vector> vectors, float[] q, List<Match> got) {
        List<String> expected = SimdHnswIndexTest.exactIds(metric, vectors, q);
        assertEquals(expected, got.stream().map(Match::id).toList(), metric.toString());
        double qn = Vectors.norm(q);
        for (Match m : got) {
            Vector v = vectors.stream()
                    .filter(x -> x.id().equals(m.id()))
                    .findFirst()
                    .orElseThrow();
            assertEquals(
                    metric.score(q, qn, v.values()),
                    m.score(),
                    1e-5 * Math.max(1, Math.abs(m.score())),
                    "the float score of " + m.id());
        }
    }

    /** Lucene's quantiles for a confidence interval: the values at both ends of its central share. */
    private static float[] quantiles(float[] values, float confidence) {
        float[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        int cut = (int) ((1 - confidence) / 2 * sorted.length);
        return new float[] {sorted[cut], sorted[sorted.length - 1 - cut]};
    }

    static float[] unit(float[] v) {
        double n = 0;
        for (float x : v) {
            n += x * x;
        }
        float[] u = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            u[i] = (float) (v[i] / Math.sqrt(n));
        }
        return u;
    }
}
