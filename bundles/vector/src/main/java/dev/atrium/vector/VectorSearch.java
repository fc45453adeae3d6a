package dev.atrium.vector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.codecs.FilterCodec;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.perfield.PerFieldKnnVectorsFormat;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.util.hnsw.RandomAccessVectorValues;
import org.apache.lucene.util.hnsw.RandomVectorScorer;

/**
 * What an index of Atrium's HNSW formats needs around Lucene: the codec that writes them, the scorer in use, and the
 * exact re-scoring of the candidates an int8 graph walk found.
 */
public final class VectorSearch {

    private VectorSearch() {}

    /**
     * The default codec with the HNSW parameters set for writing every vector field. It keeps the default codec's name
     * and its vector format keeps Lucene's name: the graph parameters are not needed to read a segment, so the stock
     * codec found through SPI reads what this one wrote — through {@link AtriumHnswVectorsFormat}, which this bundle's
     * SPI list gives for that name, and stock Lucene reads it as well.
     *
     * @param quantized int8 graph walks ({@link AtriumHnswQuantizedVectorsFormat}) or float ones
     */
    public static Codec codec(int maxConn, int beamWidth, boolean quantized) {
        // Lucene finds codecs and formats through ServiceLoader: with its classes and META-INF/services embedded in
        // this bundle, its own class loader sees them; the context loader is set too for lookups that consult it
        return withBundleLoader(() -> new TunedCodec(Codec.getDefault(), maxConn, beamWidth, quantized));
    }

    /** The format name new segments of {@link #codec} are written in. */
    public static String formatName(boolean quantized) {
        return quantized ? AtriumHnswQuantizedVectorsFormat.NAME : AtriumHnswVectorsFormat.NAME;
    }

    /**
     * How distances are computed, for a person to read: {@code simd (...)} with the Vector API, {@code scalar (...)}
     * with the reason otherwise, and a warning when segments read from disk would use another class.
     */
    public static String scorerDescription() {
        return withBundleLoader(() -> {
            String description = VectorScorers.choice().description();
            for (KnnVectorsFormat spi : List.of(
                    KnnVectorsFormat.forName(AtriumHnswVectorsFormat.NAME),
                    KnnVectorsFormat.forName(AtriumHnswQuantizedVectorsFormat.NAME))) {
                if (!spi.getClass().getName().startsWith(VectorSearch.class.getPackageName())) {
                    description += "; but segments read from disk use "
                            + spi.getClass().getName() + " (Lucene's SPI found it first)";
                }
            }
            return description;
        });
    }

    /** Whether the SIMD scorer is in use (the flat scan is only chosen with it). */
    public static boolean simd() {
        return VectorScorers.choice().simd();
    }

    /** The vector format a segment's field was written in, or null when the segment has no such field. */
    public static String format(LeafReaderContext leaf, String field) {
        FieldInfo info = leaf.reader().getFieldInfos().fieldInfo(field);
        return info == null ? null : info.getAttribute(PerFieldKnnVectorsFormat.PER_FIELD_FORMAT_KEY);
    }

    /**
     * The candidates with their exact scores, best first (ties by doc, as Lucene orders them): those of int8 segments
     * (approximate scores from the graph walk) scored again on the float vectors the segment keeps, through the same
     * scorer a float segment's search uses — so the scores are what a float index returns.
     */
    public static ScoreDoc[] exact(
            IndexSearcher s, String field, VectorSimilarityFunction similarity, float[] query, ScoreDoc[] hits)
            throws IOException {
        List<LeafReaderContext> leaves = s.getIndexReader().leaves();
        ScoreDoc[] byDoc = hits.clone();
        Arrays.sort(byDoc, Comparator.comparingInt(d -> d.doc));
        ScoreDoc[] out = new ScoreDoc[byDoc.length];
        int i = 0;
        while (i < byDoc.length) {
            LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(byDoc[i].doc, leaves));
            int end = leaf.docBase + leaf.reader().maxDoc();
            int j = i;
            while (j < byDoc.length && byDoc[j].doc < end) {
                j++;
            }
            if (AtriumHnswQuantizedVectorsFormat.NAME.equals(format(leaf, field))) {
                FloatVectorValues floats = leaf.reader().getFloatVectorValues(field);
                List<float[]> vectors = new ArrayList<>(j - i);
                for (int x = i; x < j; x++) {
                    int doc = byDoc[x].doc - leaf.docBase;
                    if (floats.docID() > doc || floats.advance(doc) != doc) {
                        throw new IOException("no vector for a document the graph search found");
                    }
                    vectors.add(floats.vectorValue().clone()); // the values keep reusing their array
                }
                RandomVectorScorer scorer = VectorScorers.scorer()
                        .getRandomVectorScorer(
                                similarity, RandomAccessVectorValues.fromFloats(vectors, query.length), query);
                for (int x = i; x < j; x++) {
                    out[x] = new ScoreDoc(byDoc[x].doc, scorer.score(x - i));
                }
            } else {
                System.arraycopy(byDoc, i, out, i, j - i); // a float segment's scores are exact already
            }
            i = j;
        }
        Arrays.sort(
                out, (a, b) -> a.score != b.score ? Float.compare(b.score, a.score) : Integer.compare(a.doc, b.doc));
        return out;
    }

    /** Lucene work run with this bundle's class loader as the context loader (SPI lookups that consult it). */
    public static <T> T withBundleLoader(IoSupplier<T> work) {
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(VectorSearch.class.getClassLoader());
        try {
            return work.get();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            t.setContextClassLoader(before);
        }
    }

    /** Work that may fail with an {@link IOException}. */
    @FunctionalInterface
    public interface IoSupplier<T> {
        T get() throws IOException;
    }

    private static final class TunedCodec extends FilterCodec {
        private final KnnVectorsFormat vectors;

        TunedCodec(Codec base, int maxConn, int beamWidth, boolean quantized) {
            super(base.getName(), base);
            KnnVectorsFormat hnsw = quantized
                    ? new AtriumHnswQuantizedVectorsFormat(maxConn, beamWidth)
                    : new AtriumHnswVectorsFormat(maxConn, beamWidth);
            this.vectors = new PerFieldKnnVectorsFormat() {
                @Override
                public KnnVectorsFormat getKnnVectorsFormatForField(String field) {
                    return hnsw;
                }
            };
        }

        @Override
        public KnnVectorsFormat knnVectorsFormat() {
            return vectors;
        }
    }
}
