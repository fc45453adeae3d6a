package dev.atrium.vector;

import java.io.IOException;
import java.util.Map;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.perfield.PerFieldKnnVectorsFormat;
import org.apache.lucene.index.CodecReader;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.VectorEncoding;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopKnnCollector;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.search.knn.KnnCollectorManager;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.hnsw.RandomVectorScorer;
import org.apache.lucene.util.quantization.QuantizedByteVectorValues;
import org.apache.lucene.util.quantization.QuantizedVectorsReader;
import org.apache.lucene.util.quantization.RandomAccessQuantizedByteVectorValues;

/**
 * Lucene's {@link KnnFloatVectorQuery}, but each int8 segment is either walked through its graph or scanned — every
 * accepted int8 vector scored in file (ord) order with the int8 scorer — as {@link FlatScanRule} decides. Both give
 * the segment's best {@code k} (ef) documents by int8 score, as Lucene's search does, so everything after it (the
 * merge of the segments' lists, the float re-score in {@link HnswIndexes#exact}) is the same. A scan is exact where
 * the walk is approximate: it returns the true int8 top k.
 * <p>
 * Lucene calls {@link #approximateSearch} for each segment with the documents a query may return (live ones, and with
 * a filter only those it accepts) and, with a filter, a visit limit of their count; it searches exhaustively itself
 * when the filter accepts no more than k. Float segments (an index not yet rewritten, or {@code hnswQuantized} off)
 * keep Lucene's walk: their vectors are four times the bytes, and no float scan was measured against their walk.
 */
public final class ScanOrWalkKnnQuery extends KnnFloatVectorQuery {

    private static final TopDocs NO_RESULTS =
            new TopDocs(new TotalHits(0, TotalHits.Relation.EQUAL_TO), new ScoreDoc[0]);

    private final float[] target;
    private final boolean scan;
    private final Map<Object, FlatScanRule.SegmentHistory> histories;
    private final FlatScanRule.SearchPaths paths;

    /**
     * @param scan whether int8 segments may be scanned ({@code hnswFlatScan}); otherwise every segment is walked
     * @param histories the index's {@link FlatScanRule.SegmentHistory} by segment core (entries leave with the core)
     */
    public ScanOrWalkKnnQuery(
            String field,
            float[] target,
            int k,
            Query filter,
            boolean scan,
            Map<Object, FlatScanRule.SegmentHistory> histories,
            FlatScanRule.SearchPaths paths) {
        super(field, target, k, filter);
        this.target = target.clone();
        this.scan = scan;
        this.histories = histories;
        this.paths = paths;
    }

    @Override
    protected TopDocs approximateSearch(
            LeafReaderContext context, Bits acceptDocs, int visitedLimit, KnnCollectorManager collectors)
            throws IOException {
        FieldInfo info = context.reader().getFieldInfos().fieldInfo(field);
        if (!scan || info == null || info.getVectorEncoding() != VectorEncoding.FLOAT32 || !int8(info)) {
            paths.walked();
            return super.approximateSearch(context, acceptDocs, visitedLimit, collectors);
        }
        // Lucene passes the filter's count + 1 as the limit of a filtered walk, no limit otherwise
        int accepted = visitedLimit == Integer.MAX_VALUE ? context.reader().numDocs() : visitedLimit - 1;
        int limit = FlatScanRule.visitLimit(accepted, VectorScorers.choice().simd());
        FlatScanRule.SegmentHistory history = history(context);
        if (history.scanWithoutWalking(k, limit)) {
            TopDocs scanned = scan(context, info, acceptDocs);
            if (scanned != null) {
                paths.scanned();
                return scanned;
            }
        }
        TopDocs walked = super.approximateSearch(context, acceptDocs, Math.min(visitedLimit, limit), collectors);
        if (limit >= visitedLimit || walked.totalHits.relation == TotalHits.Relation.EQUAL_TO) {
            paths.walked();
            return walked; // complete, or stopped by Lucene's own limit (it then searches exhaustively itself)
        }
        history.walkReachedLimit(k, limit);
        TopDocs scanned = scan(context, info, acceptDocs);
        if (scanned
                == null) { // not expected: the field's format is the int8 one, yet its int8 vectors are not readable
            // here
            paths.walked();
            return super.approximateSearch(context, acceptDocs, visitedLimit, collectors); // the walk Lucene would do
        }
        paths.walkedThenScanned();
        return scanned;
    }

    private static boolean int8(FieldInfo info) {
        return AtriumHnswQuantizedVectorsFormat.NAME.equals(
                info.getAttribute(PerFieldKnnVectorsFormat.PER_FIELD_FORMAT_KEY));
    }

    private FlatScanRule.SegmentHistory history(LeafReaderContext context) {
        IndexReader.CacheHelper core = context.reader().getCoreCacheHelper();
        if (core == null) {
            return new FlatScanRule.SegmentHistory(); // not a segment of a codec: nothing to remember it by
        }
        return histories.computeIfAbsent(core.getKey(), key -> {
            core.addClosedListener(histories::remove); // the segment is gone (merged away, index closed)
            return new FlatScanRule.SegmentHistory();
        });
    }

    /**
     * The segment's best k accepted documents by int8 score, every accepted vector scored in ord (file) order; null
     * when its int8 vectors cannot be read here.
     */
    private TopDocs scan(LeafReaderContext context, FieldInfo info, Bits acceptDocs) throws IOException {
        RandomVectorScorer scorer = int8Scorer(context, info, target);
        if (scorer == null) {
            return null;
        }
        if (scorer.maxOrd() == 0) {
            return NO_RESULTS;
        }
        // Lucene's collector of a walk's results: the same order and ties (a lower doc first among equal scores)
        TopKnnCollector best = new TopKnnCollector(k, Integer.MAX_VALUE);
        Bits acceptOrds = scorer.getAcceptOrds(acceptDocs);
        for (int ord = 0, size = scorer.maxOrd(); ord < size; ord++) {
            if (acceptOrds != null && !acceptOrds.get(ord)) {
                continue;
            }
            float score = scorer.score(ord);
            best.incVisitedCount(1);
            if (score > best.minCompetitiveSimilarity()) {
                best.collect(scorer.ordToDoc(ord), score);
            }
        }
        return best.topDocs();
    }

    /** The int8 scorer of the segment's quantized vectors for {@code target}, or null when it has none. */
    static RandomVectorScorer int8Scorer(LeafReaderContext context, FieldInfo info, float[] target) throws IOException {
        if (!(context.reader() instanceof CodecReader codec)) {
            return null;
        }
        KnnVectorsReader reader = codec.getVectorReader();
        if (reader instanceof PerFieldKnnVectorsFormat.FieldsReader perField) {
            reader = perField.getFieldReader(info.name);
        }
        if (!(reader instanceof QuantizedVectorsReader quantized)) {
            return null;
        }
        QuantizedByteVectorValues values = quantized.getQuantizedVectorValues(info.name);
        if (!(values instanceof RandomAccessQuantizedByteVectorValues random)) {
            return null;
        }
        // the scorer the segment's reader was made with (AtriumHnswQuantizedVectorsFormat), i.e. the walk's
        return VectorScorers.quantizedScorer()
                .getRandomVectorScorer(info.getVectorSimilarityFunction(), random, target);
    }
}
