package dev.atrium.vector;

import java.io.IOException;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.KnnVectorsWriter;
import org.apache.lucene.codecs.lucene99.Lucene99FlatVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswScalarQuantizedVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsReader;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsWriter;
import org.apache.lucene.codecs.lucene99.Lucene99ScalarQuantizedVectorsReader;
import org.apache.lucene.codecs.lucene99.Lucene99ScalarQuantizedVectorsWriter;
import org.apache.lucene.index.SegmentReadState;
import org.apache.lucene.index.SegmentWriteState;

/**
 * Lucene's {@link Lucene99HnswScalarQuantizedVectorsFormat} — the same reader, writer and files, under the same name —
 * with {@link VectorScorers}' scorers: the graph is walked on int8 vectors (7-bit scalar quantization, a quarter of
 * the float vectors' bytes) by {@link VectorScorers#quantizedScorer()}, and the float vectors are kept beside them
 * (Lucene's raw vector file) for {@link HnswIndexes} to score the candidates exactly and for later merges. Registered
 * under Lucene's name through this bundle's SPI list, as {@link AtriumHnswVectorsFormat} is: Lucene's SPI keeps the
 * first format of each name, and stock Lucene still reads what this one writes.
 */
public final class AtriumHnswQuantizedVectorsFormat extends KnnVectorsFormat {

    /** Lucene's name for its int8 HNSW format, which this one replaces. */
    public static final String NAME = "Lucene99HnswScalarQuantizedVectorsFormat";
    /** Lucene's default: 7 bits a value (0..127), one byte a dimension, no 4-bit packing. */
    static final int BITS = 7;

    private final int maxConn;
    private final int beamWidth;

    /** For Lucene's SPI (reading: the graph parameters only matter when writing). */
    public AtriumHnswQuantizedVectorsFormat() {
        this(Lucene99HnswVectorsFormat.DEFAULT_MAX_CONN, Lucene99HnswVectorsFormat.DEFAULT_BEAM_WIDTH);
    }

    public AtriumHnswQuantizedVectorsFormat(int maxConn, int beamWidth) {
        super(NAME);
        // the same bounds as the float format's
        new AtriumHnswVectorsFormat(maxConn, beamWidth);
        this.maxConn = maxConn;
        this.beamWidth = beamWidth;
    }

    @Override
    public KnnVectorsWriter fieldsWriter(SegmentWriteState state) throws IOException {
        // confidence interval null: Lucene's default for the dimension count (1 - 1/(d+1)), quantiles computed once
        // per segment from a sample, again on merge only when they drift
        var quantized = new Lucene99ScalarQuantizedVectorsWriter(
                state, null, (byte) BITS, false, raw().fieldsWriter(state), VectorScorers.quantizedScorer());
        return new Lucene99HnswVectorsWriter(state, maxConn, beamWidth, quantized, 1, null);
    }

    @Override
    public KnnVectorsReader fieldsReader(SegmentReadState state) throws IOException {
        return new Lucene99HnswVectorsReader(
                state,
                new Lucene99ScalarQuantizedVectorsReader(
                        state, raw().fieldsReader(state), VectorScorers.quantizedScorer()));
    }

    private static Lucene99FlatVectorsFormat raw() {
        return new Lucene99FlatVectorsFormat(VectorScorers.scorer());
    }

    @Override
    public int getMaxDimensions(String fieldName) {
        return AtriumHnswVectorsFormat.MAX_DIMENSIONS;
    }

    @Override
    public String toString() {
        return "AtriumHnswQuantizedVectorsFormat(name=" + NAME + ", maxConn=" + maxConn + ", beamWidth=" + beamWidth
                + ", bits=" + BITS + ", scorer=" + VectorScorers.choice().description() + ")";
    }
}
