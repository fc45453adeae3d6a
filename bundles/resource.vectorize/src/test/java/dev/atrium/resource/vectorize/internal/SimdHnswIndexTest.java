package dev.atrium.resource.vectorize.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;
import dev.atrium.vector.AtriumHnswQuantizedVectorsFormat;
import dev.atrium.vector.AtriumHnswVectorsFormat;
import dev.atrium.vector.SimdFlatVectorsScorer;
import dev.atrium.vector.VectorScorers;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.hnsw.FlatVectorsReader;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsReader;
import org.apache.lucene.codecs.perfield.PerFieldKnnVectorsFormat;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SegmentReader;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * HNSW indexes on disk through {@link AtriumHnswVectorsFormat}: what they answer is the exact top-k on a small set,
 * indexes written by stock Lucene (before this format existed) are read through it, and a JVM without the Vector API
 * module falls back to Lucene's scorer and still answers.
 */
class SimdHnswIndexTest {

    static final int K = 10;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(Metric.class)
    void anIndexWrittenWithTheSimdFormatAnswersTheExactTopK(Metric metric) throws Exception {
        Random r = new Random(metric.ordinal());
        int dims = 37;
        List<Vector> vectors = vectors(r, 900, dims);
        List<float[]> queries = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            queries.add(VectorizeProviderTest.random(r, dims));
        }
        // ef = 10 x 100 over 900 vectors: Lucene's search is exhaustive enough to be exact here; float vectors (the
        // int8 format is QuantizedHnswIndexTest's)
        HnswIndexes.Tuning tuning = new HnswIndexes.Tuning(16, 100, 100, 0, false);
        HnswIndexes indexes = new HnswIndexes(tuning);
        try {
            for (int i = 0; i < vectors.size(); i += 300) {
                indexes.upsert("r", dir, metric, vectors.subList(i, i + 300)); // three segments, each a graph
            }
            assertTrue(indexes.scorer().startsWith("simd ("), indexes.scorer());
            for (float[] q : queries) {
                assertExact(metric, vectors, q, indexes.query("r", dir, metric, q, K, Map.of()));
            }
        } finally {
            indexes.close();
        }
        // read back from disk (the segments' format found by name through Lucene's SPI), merged into one graph
        indexes = new HnswIndexes(tuning);
        try {
            for (float[] q : queries) {
                assertExact(metric, vectors, q, indexes.query("r", dir, metric, q, K, Map.of()));
            }
        } finally {
            indexes.close();
        }
        try (Directory d = FSDirectory.open(dir.resolve("lucene"));
                IndexWriter w = new IndexWriter(d, new IndexWriterConfig())) {
            assertSimdReaders(d);
            w.forceMerge(1);
        }
        indexes = new HnswIndexes(tuning);
        try {
            assertEquals(1, indexes.segments("r", dir));
            for (float[] q : queries) {
                assertExact(metric, vectors, q, indexes.query("r", dir, metric, q, K, Map.of()));
            }
        } finally {
            indexes.close();
        }
    }

    @Test
    void anIndexWrittenByStockLuceneIsReadThroughTheSimdFormat() throws Exception {
        assertInstanceOf(
                AtriumHnswVectorsFormat.class,
                KnnVectorsFormat.forName("Lucene99HnswVectorsFormat"),
                "this bundle's SPI list names its own format for Lucene's HNSW format");
        Random r = new Random(11);
        int dims = 384;
        List<Vector> vectors = vectors(r, 300, dims);
        // Lucene's default codec, which writes with its own Lucene99HnswVectorsFormat instance (not through SPI):
        // an index as this bundle wrote it before the SIMD format
        try (Directory d = FSDirectory.open(java.nio.file.Files.createDirectories(dir.resolve("lucene")));
                IndexWriter w = new IndexWriter(d, new IndexWriterConfig())) {
            for (Vector v : vectors) {
                Document doc = new Document();
                doc.add(new StringField(HnswIndexes.ID, v.id(), Field.Store.YES));
                doc.add(new KnnFloatVectorField(HnswIndexes.VECTOR, v.values(), HnswIndexes.similarity(Metric.COSINE)));
                doc.add(new StoredField(HnswIndexes.META, Vectors.metadataJson(v.metadata())));
                w.addDocument(doc);
            }
            w.commit();
        }
        try (Directory d = FSDirectory.open(dir.resolve("lucene"))) {
            assertSimdReaders(d);
        }
        HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 0));
        try {
            for (int i = 0; i < 10; i++) {
                float[] q = VectorizeProviderTest.random(r, dims);
                assertExact(Metric.COSINE, vectors, q, indexes.query("r", dir, Metric.COSINE, q, K, Map.of()));
            }
        } finally {
            indexes.close();
        }
    }

    @Test
    void anIndexTakesVectorsOfMoreThanLucenesDefault1024Dimensions() throws Exception {
        Random r = new Random(13);
        List<Vector> vectors = vectors(r, 60, 1536); // an OpenAI-size embedding; Lucene's own format refuses > 1,024
        HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 10, 0));
        try {
            indexes.upsert("r", dir, Metric.COSINE, vectors);
            float[] q = VectorizeProviderTest.random(r, 1536);
            assertExact(Metric.COSINE, vectors, q, indexes.query("r", dir, Metric.COSINE, q, K, Map.of()));
        } finally {
            indexes.close();
        }
    }

    @Test
    void withoutTheVectorModuleLucenesScorersAreUsedAndInt8IndexesStillAnswerExactly() throws Exception {
        // a JVM of its own, started as an operator might start the server, without --add-modules jdk.incubator.vector
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(
                        java.toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        ScalarProbe.class.getName(),
                        dir.toString())
                .redirectErrorStream(true)
                .start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(out);
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        String said = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), said);
        assertTrue(
                said.contains(
                        "scorer: scalar (Lucene's default scorer; the JVM was started without --add-modules jdk.incubator.vector)"),
                said);
        assertTrue(
                said.contains("WARN") && said.contains("HNSW distances computed by the scalar"),
                "logged once: " + said);
        assertTrue(said.contains("formats: [" + AtriumHnswQuantizedVectorsFormat.NAME + "]"), said);
        assertTrue(said.contains("int8 scorer: Lucene99ScalarQuantizedVectorScorer"), said);
        assertTrue(said.contains("exact: true"), said);
        assertTrue(said.contains("float score: true"), said);
    }

    /** The probe the test above starts: an index written and queried on a JVM without the module. */
    public static final class ScalarProbe {
        public static void main(String[] args) throws Exception {
            Path dir = Path.of(args[0]);
            Random r = new Random(5);
            List<Vector> vectors = vectors(r, 300, 24);
            // the default: the graph walked on int8 vectors (Lucene's int8 scorer here), candidates scored on floats
            HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 50, 0));
            try {
                indexes.upsert("r", dir, Metric.EUCLIDEAN, vectors);
                System.out.println("scorer: " + indexes.scorer());
                System.out.println("formats: " + indexes.formats("r", dir));
                System.out.println("int8 scorer: "
                        + VectorScorers.quantizedScorer().getClass().getSimpleName());
                float[] q = VectorizeProviderTest.random(r, 24);
                List<Match> got = indexes.query("r", dir, Metric.EUCLIDEAN, q, K, Map.of());
                System.out.println("exact: "
                        + exactIds(Metric.EUCLIDEAN, vectors, q)
                                .equals(got.stream().map(Match::id).toList()));
                Vector best = vectors.stream()
                        .filter(v -> v.id().equals(got.get(0).id()))
                        .findFirst()
                        .orElseThrow();
                System.out.println("float score: "
                        + (Metric.EUCLIDEAN.score(q, Vectors.norm(q), best.values())
                                        == (float) got.get(0).score()
                                || Math.abs(Metric.EUCLIDEAN.score(q, Vectors.norm(q), best.values())
                                                - got.get(0).score())
                                        < 1e-6));
            } finally {
                indexes.close();
            }
        }
    }

    /** Every vector segment of the index is read by Lucene's HNSW reader over a flat reader with the SIMD scorer. */
    private static void assertSimdReaders(Directory d) throws Exception {
        try (DirectoryReader reader = DirectoryReader.open(d)) {
            assertTrue(reader.leaves().size() >= 1);
            for (LeafReaderContext leaf : reader.leaves()) {
                KnnVectorsReader perField = ((SegmentReader) leaf.reader()).getVectorReader();
                KnnVectorsReader hnsw =
                        ((PerFieldKnnVectorsFormat.FieldsReader) perField).getFieldReader(HnswIndexes.VECTOR);
                assertInstanceOf(Lucene99HnswVectorsReader.class, hnsw);
                // Lucene keeps the flat reader private; its scorer says which one reads the vectors
                java.lang.reflect.Field flat = Lucene99HnswVectorsReader.class.getDeclaredField("flatVectorsReader");
                flat.setAccessible(true);
                assertInstanceOf(
                        SimdFlatVectorsScorer.class, ((FlatVectorsReader) flat.get(hnsw)).getFlatVectorScorer());
            }
        }
    }

    static List<Vector> vectors(Random r, int n, int dims) {
        List<Vector> vectors = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            vectors.add(new Vector("v" + i, VectorizeProviderTest.random(r, dims), Map.of("i", i)));
        }
        return vectors;
    }

    /** The exact top {@link #K}, best first (ties in list order); each vector scored once, not once per comparison. */
    static List<String> exactIds(Metric metric, List<Vector> vectors, float[] q) {
        double qn = Vectors.norm(q);
        double[] scores = new double[vectors.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = metric.score(q, qn, vectors.get(i).values());
        }
        return java.util.stream.IntStream.range(0, scores.length)
                .boxed()
                .sorted(Comparator.comparingDouble((Integer i) -> -scores[i]))
                .limit(K)
                .map(i -> vectors.get(i).id())
                .toList();
    }

    private static void assertExact(Metric metric, List<Vector> vectors, float[] q, List<Match> got) {
        List<String> expected = exactIds(metric, vectors, q);
        assertEquals(expected, got.stream().map(Match::id).toList(), metric.toString());
        double qn = Vectors.norm(q);
        Vector best = vectors.stream()
                .filter(v -> v.id().equals(expected.get(0)))
                .findFirst()
                .orElseThrow();
        assertEquals(
                metric.score(q, qn, best.values()),
                got.get(0).score(),
                1e-4 * Math.max(1, Math.abs(got.get(0).score())),
                "the metric's score");
    }
}
