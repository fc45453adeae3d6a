package dev.atrium.vector;

import java.io.IOException;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.KnnVectorsWriter;
import org.apache.lucene.codecs.hnsw.FlatVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99FlatVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsReader;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsWriter;
import org.apache.lucene.index.SegmentReadState;
import org.apache.lucene.index.SegmentWriteState;

/**
 * Lucene's {@link Lucene99HnswVectorsFormat} — the same reader, writer and files, under the same name — over a flat
 * format whose scorer is {@link VectorScorers#scorer()} (SIMD when the JVM has the Vector API). Its name is Lucene's
 * on purpose: this bundle's {@code META-INF/services/org.apache.lucene.codecs.KnnVectorsFormat} lists this class
 * before Lucene's, and Lucene's SPI keeps the first format of each name, so every segment of every index — those
 * written before this class existed too — is read through it, and stock Lucene still reads what it writes.
 * <p>
 * Unlike Lucene's, it accepts up to 4,096 dimensions (a vectorize index's largest), not 1,024: the limit guards
 * nothing in the file format, only memory and time per vector.
 */
public final class AtriumHnswVectorsFormat extends KnnVectorsFormat {

    /** Lucene's name for its HNSW format, which this one replaces. */
    public static final String NAME = "Lucene99HnswVectorsFormat";

    static final int MAX_DIMENSIONS = 4096;

    private final int maxConn;
    private final int beamWidth;
    private final FlatVectorsFormat flat;

    /** For Lucene's SPI (reading: the graph parameters only matter when writing). */
    public AtriumHnswVectorsFormat() {
        this(Lucene99HnswVectorsFormat.DEFAULT_MAX_CONN, Lucene99HnswVectorsFormat.DEFAULT_BEAM_WIDTH);
    }

    public AtriumHnswVectorsFormat(int maxConn, int beamWidth) {
        super(NAME);
        if (maxConn <= 0 || maxConn > Lucene99HnswVectorsFormat.MAXIMUM_MAX_CONN) {
            throw new IllegalArgumentException("maxConn must be between 1 and "
                    + Lucene99HnswVectorsFormat.MAXIMUM_MAX_CONN + "; maxConn=" + maxConn);
        }
        if (beamWidth <= 0 || beamWidth > Lucene99HnswVectorsFormat.MAXIMUM_BEAM_WIDTH) {
            throw new IllegalArgumentException("beamWidth must be between 1 and "
                    + Lucene99HnswVectorsFormat.MAXIMUM_BEAM_WIDTH + "; beamWidth=" + beamWidth);
        }
        this.maxConn = maxConn;
        this.beamWidth = beamWidth;
        this.flat = new Lucene99FlatVectorsFormat(VectorScorers.scorer());
    }

    @Override
    public KnnVectorsWriter fieldsWriter(SegmentWriteState state) throws IOException {
        return new Lucene99HnswVectorsWriter(state, maxConn, beamWidth, flat.fieldsWriter(state), 1, null);
    }

    @Override
    public KnnVectorsReader fieldsReader(SegmentReadState state) throws IOException {
        return new Lucene99HnswVectorsReader(state, flat.fieldsReader(state));
    }

    @Override
    public int getMaxDimensions(String fieldName) {
        return MAX_DIMENSIONS;
    }

    @Override
    public String toString() {
        return "AtriumHnswVectorsFormat(name=" + NAME + ", maxConn=" + maxConn + ", beamWidth=" + beamWidth
                + ", flatVectorFormat=" + flat + ", scorer="
                + VectorScorers.choice().description() + ")";
    }
}
